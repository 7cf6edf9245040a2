import type { Store } from '@sluice/core';

/** What the example's counters live in, for its start-up line. */
export interface CounterStore {
  readonly store?: Store;
  /** `in-memory counters`, `Redis counters`, or Redis counters failing open while Redis does not answer. */
  readonly description: string;
  close(): Promise<void>;
}

/** How long the example waits for its first Redis connection before it starts anyway. */
const FIRST_CONNECTION_MS = 5000;

/**
 * The counter store: a Redis Cluster when REDIS_CLUSTER_NODES is set (`host:port,host:port`), Redis when
 * REDIS_URL is set (counters shared by every instance of the API), else the limiter's default in-process
 * MemoryStore. ioredis is only loaded when it is needed. A Redis that is not running does not stop the API:
 * it starts, fails open as the rules say (login fails closed), and RedisStore logs SLUICE_STORE_UNREACHABLE
 * once, and SLUICE_STORE_RECOVERED once when Redis answers.
 */
export async function storeFromEnv(): Promise<CounterStore> {
  const url = process.env.REDIS_URL;
  const nodes = process.env.REDIS_CLUSTER_NODES;
  if (!url && !nodes) return { description: 'in-memory counters', close: async () => {} };
  const [{ Cluster, Redis }, { RedisStore, recommendedRedisOptions }] = await Promise.all([
    import('ioredis'),
    import('@sluice/redis'),
  ]);
  const client = nodes
    ? new Cluster(nodes.split(',').map(clusterNode), {
        enableOfflineQueue: false,
        redisOptions: recommendedRedisOptions,
      })
    : new Redis(url!, recommendedRedisOptions);
  // The store first: its error listener is what keeps a refused connection from crashing the process (an
  // `error` event with no listener throws) and from ioredis logging every failed reconnect.
  const store = new RedisStore({ client });
  const reached = await firstConnection(client);
  return {
    store,
    description: reached
      ? 'Redis counters'
      : 'Redis counters; Redis not answering yet, failing open until it does',
    // The limiter closes the store; the client is ours. quit() needs a connection, disconnect() does not.
    close: async () => {
      if (client.status === 'ready') await client.quit();
      else client.disconnect();
    },
  };
}

/**
 * Whether the client connects before its first error or {@link FIRST_CONNECTION_MS}: without an offline
 * queue, calls made before the connection is up fail (open), so a reachable Redis is worth a brief wait and
 * an unreachable one is not.
 */
function firstConnection(client: {
  once(event: string, listener: () => void): unknown;
  off(event: string, listener: () => void): unknown;
}): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (reached: boolean) => () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      resolve(reached);
    };
    const onReady = settle(true);
    const onError = settle(false);
    const timer = setTimeout(onError, FIRST_CONNECTION_MS);
    timer.unref();
    client.once('ready', onReady);
    client.once('error', onError);
  });
}

function clusterNode(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).trim(), port: Number(address.slice(at + 1)) };
}

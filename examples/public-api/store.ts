import { once } from 'node:events';
import type { Store } from '@sluice/core';

/**
 * The counter store: a Redis Cluster when REDIS_CLUSTER_NODES is set (`host:port,host:port`), Redis when
 * REDIS_URL is set (counters shared by every instance of the API), else the limiter's default in-process
 * MemoryStore. ioredis is only loaded when it is needed.
 */
export async function storeFromEnv(): Promise<{ store?: Store; close(): Promise<void> }> {
  const url = process.env.REDIS_URL;
  const nodes = process.env.REDIS_CLUSTER_NODES;
  if (!url && !nodes) return { close: async () => {} };
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
  // Without an offline queue, calls made before the connection is up fail (open): wait for it, briefly.
  await Promise.race([once(client, 'ready'), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
  return {
    store: new RedisStore({ client }),
    close: async () => {
      await client.quit();
    },
  };
}

function clusterNode(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).trim(), port: Number(address.slice(at + 1)) };
}

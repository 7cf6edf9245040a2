/**
 * Every kind of client a RedisStore takes, for one test file: ioredis and node-redis, each on one private
 * redis-server and on a private 3-master Cluster, started before the file's tests and stopped after them.
 */
import type { RedisStoreOptions } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { afterAll, beforeAll } from 'vitest';
import {
  nodeRedisClient,
  nodeRedisCluster,
  type RedisClusterHandle,
  type RedisServer,
  ready,
  startCluster,
  startRedis,
} from './redis.js';

/** A client as RedisStore takes it. */
export type StoreClient = RedisStoreOptions['client'];

/** The kinds, by the name a test title gives them. */
export const CLIENT_KINDS = [
  'ioredis, one server',
  'ioredis, Cluster',
  'ioredis 6, one server',
  'ioredis 6, Cluster',
  'node-redis, one server',
  'node-redis, Cluster',
] as const;

export type ClientKind = (typeof CLIENT_KINDS)[number];

/** Connects one kind of client to the file's server or Cluster; answers the client and how to end it. */
type Connect = (
  server: RedisServer,
  cluster: RedisClusterHandle,
) => Promise<readonly [StoreClient, () => void]>;

const CONNECT: Readonly<Record<ClientKind, Connect>> = {
  'ioredis, one server': async (server) => {
    const client = new Redis({ host: server.host, port: server.port });
    await ready(client);
    return [client, () => client.disconnect()];
  },
  'ioredis, Cluster': async (_server, cluster) => {
    const client = new Cluster(cluster.nodes);
    await ready(client);
    return [client, () => client.disconnect()];
  },
  // ioredis 6 (the peer range takes both majors); its types are another copy's, so the store takes it as is.
  'ioredis 6, one server': async (server) => {
    const client = new Redis6({ host: server.host, port: server.port });
    await ready(client as unknown as Redis);
    return [client as unknown as StoreClient, () => client.disconnect()];
  },
  'ioredis 6, Cluster': async (_server, cluster) => {
    const client = new Cluster6(cluster.nodes);
    await ready(client as unknown as Cluster);
    return [client as unknown as StoreClient, () => client.disconnect()];
  },
  'node-redis, one server': async (server) => {
    const client = await nodeRedisClient(server);
    return [client, () => client.destroy()];
  },
  'node-redis, Cluster': async (_server, cluster) => {
    const client = await nodeRedisCluster(cluster);
    return [client, () => client.destroy()];
  },
};

/**
 * Registers the file's beforeAll/afterAll, connecting `kinds` (every kind by default); `clientOf(kind)` answers
 * inside tests, once everything is up.
 */
export function clientKinds(kinds: readonly ClientKind[] = CLIENT_KINDS): {
  clientOf(kind: ClientKind): StoreClient;
} {
  let server: RedisServer | undefined;
  let cluster: RedisClusterHandle | undefined;
  const clients = new Map<ClientKind, StoreClient>();
  const closers: (() => void)[] = [];
  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedis(), startCluster()]);
    const connected = await Promise.all(
      kinds.map((kind) => CONNECT[kind](server as RedisServer, cluster as RedisClusterHandle)),
    );
    connected.forEach(([client, close], i) => {
      clients.set(kinds[i] as ClientKind, client);
      closers.push(close);
    });
  });
  afterAll(async () => {
    for (const close of closers) close();
    await Promise.all([server?.stop(), cluster?.stop()]);
  });
  return {
    clientOf(kind) {
      const client = clients.get(kind);
      if (client === undefined) throw new Error('clientKinds: clients are ready inside tests only');
      return client;
    },
  };
}

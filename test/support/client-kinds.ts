/**
 * Every kind of client a RedisStore takes, for one test file: ioredis and node-redis, each on one private
 * redis-server and on a private 3-master Cluster, started before the file's tests and stopped after them.
 */
import type { RedisStoreOptions } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
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
  'node-redis, one server',
  'node-redis, Cluster',
] as const;

export type ClientKind = (typeof CLIENT_KINDS)[number];

/** Registers the file's beforeAll/afterAll; `clientOf(kind)` answers inside tests, once everything is up. */
export function clientKinds(): { clientOf(kind: ClientKind): StoreClient } {
  let server: RedisServer | undefined;
  let cluster: RedisClusterHandle | undefined;
  const clients = new Map<ClientKind, StoreClient>();
  const closers: (() => void)[] = [];
  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedis(), startCluster()]);
    const ioredis = new Redis({ host: server.host, port: server.port });
    const ioCluster = new Cluster(cluster.nodes);
    await Promise.all([ready(ioredis), ready(ioCluster)]);
    const [node, nodeCluster] = await Promise.all([nodeRedisClient(server), nodeRedisCluster(cluster)]);
    for (const [kind, client] of [
      ['ioredis, one server', ioredis],
      ['ioredis, Cluster', ioCluster],
      ['node-redis, one server', node],
      ['node-redis, Cluster', nodeCluster],
    ] as const)
      clients.set(kind, client);
    closers.push(
      () => ioredis.disconnect(),
      () => ioCluster.disconnect(),
      () => node.destroy(),
      () => nodeCluster.destroy(),
    );
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

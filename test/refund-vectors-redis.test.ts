/**
 * The refund vectors (test/vectors/refunds) on RedisStore: ioredis and node-redis, over one server and over a
 * 3-master Redis Cluster. Each case runs on a counter of its own.
 */
import { hashText, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
import type { RedisClientType, RedisClusterType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  nodeRedisClient,
  nodeRedisCluster,
  type RedisClusterHandle,
  type RedisServer,
  randomPrefix,
  ready,
  startCluster,
  startRedis,
} from './support/redis.js';
import { loadRefundVectors, runRefundCase } from './vectors/refundVectors.js';

const cases = loadRefundVectors();
let server: RedisServer;
let cluster: RedisClusterHandle;
const clients: {
  ioredis?: Redis;
  ioCluster?: Cluster;
  node?: RedisClientType;
  nodeCluster?: RedisClusterType;
} = {};
const stores = new Map<string, Store>();

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  clients.ioredis = new Redis({ host: server.host, port: server.port });
  clients.ioCluster = new Cluster(cluster.nodes);
  await Promise.all([ready(clients.ioredis), ready(clients.ioCluster)]);
  [clients.node, clients.nodeCluster] = await Promise.all([
    nodeRedisClient(server),
    nodeRedisCluster(cluster),
  ]);
  const store = (client: ConstructorParameters<typeof RedisStore>[0]['client']) =>
    new RedisStore({ client, prefix: randomPrefix('refund'), timeoutMs: 10_000, breaker: false });
  stores.set('ioredis', store(clients.ioredis));
  stores.set('ioredis Cluster', store(clients.ioCluster));
  stores.set('node-redis', store(clients.node));
  stores.set('node-redis Cluster', store(clients.nodeCluster));
});

afterAll(async () => {
  await Promise.all([...stores.values()].map((store) => store.close()));
  clients.ioredis?.disconnect();
  clients.ioCluster?.disconnect();
  clients.node?.destroy();
  clients.nodeCluster?.destroy();
  await Promise.all([server?.stop(), cluster?.stop()]);
});

describe.each(['ioredis', 'ioredis Cluster', 'node-redis', 'node-redis Cluster'])(
  'refund vectors on %s',
  (name) => {
    it.each(cases)('$algorithm: $name', async (vectorCase) => {
      const counter = { rule: 'refund', tag: hashText(`${name}:${vectorCase.algorithm}:${vectorCase.name}`) };
      expect(await runRefundCase(stores.get(name)!, vectorCase, counter)).toEqual([]);
    });
  },
);

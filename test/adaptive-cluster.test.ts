/**
 * Adaptive factors on a 3-master Redis Cluster (ioredis and node-redis) and on node-redis against one server: the
 * same steps as core's, shared by two stores, each rule's key in a slot of its own.
 */
import { ADAPTIVE_DEFAULTS, type AdaptivePolicy, type FactorReport, MemoryFactors } from '@sluice/core';
import { RedisStore, type RedisStoreOptions } from '@sluice/redis';
import { Cluster } from 'ioredis';
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

type Client = RedisStoreOptions['client'];

let server: RedisServer;
let cluster: RedisClusterHandle;
const clients: Record<string, Client> = {};
const closers: (() => void)[] = [];

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  const ioCluster = new Cluster(cluster.nodes);
  await ready(ioCluster);
  const [node, nodeCluster] = await Promise.all([nodeRedisClient(server), nodeRedisCluster(cluster)]);
  Object.assign(clients, {
    'ioredis, Cluster': ioCluster,
    'node-redis, one server': node,
    'node-redis, Cluster': nodeCluster,
  });
  closers.push(
    () => ioCluster.disconnect(),
    () => node.destroy(),
    () => nodeCluster.destroy(),
  );
});
afterAll(async () => {
  for (const close of closers) close();
  await Promise.all([server?.stop(), cluster?.stop()]);
});

const policy: AdaptivePolicy = { ...ADAPTIVE_DEFAULTS, errorRate: 0.1, minSamples: 10 };

describe.each(['ioredis, Cluster', 'node-redis, one server', 'node-redis, Cluster'])('on %s', (where) => {
  it('two stores share each rule’s factor, stepping as core does', async () => {
    const prefix = randomPrefix('ad');
    const [a, b] = [0, 1].map(
      () => new RedisStore({ client: clients[where] as Client, prefix, timeoutMs: 5000, breaker: false }),
    ) as [RedisStore, RedisStore];
    const memory = new MemoryFactors();
    const fromRedis: number[] = [];
    const fromMemory: number[] = [];
    let now = 3_000_000;
    for (let i = 0; i < 12; i++) {
      now += 600;
      for (const id of ['api/payments', 'api/search']) {
        const report: FactorReport = {
          id,
          policy,
          requests: 20,
          errors: i < 6 && id === 'api/payments' ? 6 : 0,
          slow: 0,
        };
        fromRedis.push(await (i % 2 === 0 ? a : b).adaptFactor(report, now));
        fromMemory.push(memory.adaptFactor(report, now));
      }
    }
    expect(fromRedis).toEqual(fromMemory);
    expect(Math.min(...fromMemory)).toBeLessThan(0.5);
  });
});

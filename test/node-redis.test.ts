/**
 * RedisStore on node-redis (the `redis` package): the same store contract suite and shared vectors as on
 * ioredis, over one server and over a Redis Cluster.
 */
import { hashText } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import type { RedisClientType, RedisClusterType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStoreContract } from './contract/store.js';
import {
  nodeRedisClient,
  nodeRedisCluster,
  type RedisClusterHandle,
  type RedisServer,
  randomPrefix,
  startCluster,
  startRedis,
} from './support/redis.js';
import { loadVectors, runVectorCase } from './vectors/vectors.js';

let server: RedisServer;
let client: RedisClientType;
let cluster: RedisClusterHandle;
let clusterClient: RedisClusterType;

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  [client, clusterClient] = await Promise.all([nodeRedisClient(server), nodeRedisCluster(cluster)]);
});
afterAll(async () => {
  client.destroy();
  clusterClient.destroy();
  await Promise.all([server.stop(), cluster.stop()]);
});

const options = { timeoutMs: 5000, breaker: false } as const;
const onServer = (prefix: string) => new RedisStore({ client, prefix, ...options });
const onCluster = (prefix: string) => new RedisStore({ client: clusterClient, prefix, ...options });

describeStoreContract('RedisStore on node-redis (one server)', async () => ({
  store: onServer(randomPrefix('contract')),
}));

describeStoreContract('RedisStore on node-redis (Cluster)', async () => ({
  store: onCluster(randomPrefix('contract')),
}));

describe.each([
  ['one server', onServer],
  ['a Cluster', onCluster],
] as const)('vectors on node-redis, %s', (_, storeFor) => {
  describe.each(loadVectors())('$algorithm', ({ algorithm, cases }) => {
    it.each(cases)('$name', async (vectorCase) => {
      const store = storeFor(randomPrefix('vec'));
      const counter = { rule: 'vector', tag: hashText(`${algorithm}:${vectorCase.name}`) };
      expect(await runVectorCase(store, vectorCase, counter)).toEqual([]);
      await store.close();
    });
  });
});

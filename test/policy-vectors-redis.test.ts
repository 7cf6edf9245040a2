/**
 * The shared policy vectors (test/vectors/policies: bans and escalation, penalty, idempotency) on RedisStore
 * over ioredis and node-redis, on one server and on a 3-master Cluster, as MemoryStore runs them.
 */
import { hashText } from '@sluice/core';
import { RedisStore, type RedisStoreOptions } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
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
import { loadPolicyVectors, runPolicyCase } from './vectors/policyVectors.js';

type Client = RedisStoreOptions['client'];

let server: RedisServer;
let cluster: RedisClusterHandle;
const clients: Record<string, Client> = {};
const closers: (() => void)[] = [];

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  const ioredis = new Redis({ host: server.host, port: server.port });
  const ioCluster = new Cluster(cluster.nodes);
  await Promise.all([ready(ioredis), ready(ioCluster)]);
  const [node, nodeCluster] = await Promise.all([nodeRedisClient(server), nodeRedisCluster(cluster)]);
  Object.assign(clients, {
    'ioredis, one server': ioredis,
    'ioredis, Cluster': ioCluster,
    'node-redis, one server': node,
    'node-redis, Cluster': nodeCluster,
  });
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

describe.each(['ioredis, one server', 'ioredis, Cluster', 'node-redis, one server', 'node-redis, Cluster'])(
  'policy vectors on %s',
  (where) => {
    it.each(loadPolicyVectors())('$name', async (policyCase) => {
      const store = new RedisStore({
        client: clients[where]!,
        prefix: randomPrefix('pol'),
        timeoutMs: 5000,
        breaker: false,
      });
      try {
        const counter = { rule: 'vector', tag: hashText(policyCase.name) };
        expect(await runPolicyCase(store, policyCase, counter)).toEqual([]);
      } finally {
        await store.close();
      }
    });
  },
);

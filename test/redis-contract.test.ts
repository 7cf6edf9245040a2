/** The store contract suite (test/contract) on RedisStore, over one server and over a Redis Cluster. */
import { RedisStore } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { describeStoreContract } from './contract/store.js';
import {
  type RedisClusterHandle,
  type RedisServer,
  randomPrefix,
  startCluster,
  startRedis,
} from './support/redis.js';

let server: RedisServer;
let client: Redis;
let cluster: RedisClusterHandle;
let clusterClient: Cluster;

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster()]);
  client = new Redis({ host: server.host, port: server.port });
  clusterClient = new Cluster(cluster.nodes);
});
afterAll(async () => {
  client.disconnect();
  clusterClient.disconnect();
  await Promise.all([server.stop(), cluster.stop()]);
});

const options = { timeoutMs: 5000, breaker: false } as const;

describeStoreContract('RedisStore (one server)', async () => ({
  store: new RedisStore({ client, prefix: randomPrefix('contract'), ...options }),
}));

describeStoreContract('RedisStore (Cluster)', async () => ({
  store: new RedisStore({ client: clusterClient, prefix: randomPrefix('contract'), ...options }),
}));

/**
 * What a Redis client proves before Sluice supports it: the store contract suite and the shared vectors, on one
 * server and on a Redis Cluster. ioredis and node-redis both run exactly this.
 */
import { hashText } from '@sluice/core';
import { loadVectors, runVectorCase } from '@sluice/core/testing';
import { RedisStore, type RedisStoreOptions } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStoreContract } from '../contract/store.js';
import {
  type RedisClusterHandle,
  type RedisServer,
  randomPrefix,
  startCluster,
  startRedis,
} from './redis.js';

type Client = RedisStoreOptions['client'];

/** A client's connections to the test's server and Cluster, and how to end them. */
export interface ClientPair {
  readonly server: Client;
  readonly cluster: Client;
  close(): void;
}

/** Runs the contract suite and the vectors on RedisStore over `connect`'s clients. */
export function proveRedisClient(
  name: string,
  connect: (server: RedisServer, cluster: RedisClusterHandle) => Promise<ClientPair>,
): void {
  let server: RedisServer;
  let cluster: RedisClusterHandle;
  let clients: ClientPair;
  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedis(), startCluster()]);
    clients = await connect(server, cluster);
  });
  afterAll(async () => {
    clients.close();
    await Promise.all([server.stop(), cluster.stop()]);
  });

  const topologies = [
    ['one server', () => clients.server],
    ['Cluster', () => clients.cluster],
  ] as const;
  for (const [where, client] of topologies) {
    const storeFor = (prefix: string) =>
      new RedisStore({ client: client(), prefix, timeoutMs: 5000, breaker: false });
    describeStoreContract(`RedisStore on ${name} (${where})`, async () => ({
      store: storeFor(randomPrefix('contract')),
    }));
    describe.each(loadVectors())(`$algorithm vectors on ${name}, ${where}`, ({ algorithm, cases }) => {
      it.each(cases)('$name', async (vectorCase) => {
        const store = storeFor(randomPrefix('vec'));
        const counter = { rule: 'vector', tag: hashText(`${algorithm}:${vectorCase.name}`) };
        try {
          expect(await runVectorCase(store, vectorCase, counter)).toEqual([]);
        } finally {
          await store.close();
        }
      });
    });
  }
}

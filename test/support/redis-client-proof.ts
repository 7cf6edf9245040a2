/**
 * What a Redis client proves before Sluice supports it: the store contract suite and the shared vectors, on one
 * server and on a Redis Cluster. ioredis and node-redis both run exactly this, on the clients of client-kinds.ts.
 */
import { hashText } from '@sluice/core';
import { loadVectors, runVectorCase } from '@sluice/core/testing';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { describeStoreContract } from '../contract/store.js';
import { type ClientKind, clientKinds } from './client-kinds.js';
import { randomPrefix } from './redis.js';

/** A Redis client library RedisStore supports, as client-kinds.ts names its kinds. */
export type ClientLibrary = 'ioredis' | 'ioredis 6' | 'node-redis';

/** Runs the contract suite and the vectors on RedisStore over `library`'s clients, one server and a Cluster. */
export function proveRedisClient(library: ClientLibrary): void {
  const topologies = ['one server', 'Cluster'] as const;
  const kindOf = (where: (typeof topologies)[number]): ClientKind => `${library}, ${where}`;
  const kinds = clientKinds(topologies.map(kindOf));
  for (const where of topologies) {
    const storeFor = (prefix: string) =>
      new RedisStore({ client: kinds.clientOf(kindOf(where)), prefix, timeoutMs: 5000, breaker: false });
    describeStoreContract(`RedisStore on ${library} (${where})`, async () => ({
      store: storeFor(randomPrefix('contract')),
    }));
    describe.each(loadVectors())(`$algorithm vectors on ${library}, ${where}`, ({ algorithm, cases }) => {
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

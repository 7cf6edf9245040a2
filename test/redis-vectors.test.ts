/** The shared vectors (test/vectors) on RedisStore over one private redis-server. */
import { hashText } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, startRedis } from './support/redis.js';
import { loadVectors, runVectorCase } from './vectors/vectors.js';

let server: RedisServer;
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({ host: server.host, port: server.port });
  store = new RedisStore({ client, prefix: randomPrefix('vec'), timeoutMs: 5000, breaker: false });
});
afterAll(async () => {
  await store.close();
  client.disconnect();
  await server.stop();
});

describe.each(loadVectors())('$algorithm vectors on RedisStore', ({ algorithm, cases }) => {
  it.each(cases)('$name', async (vectorCase) => {
    const counter = { rule: 'vector', tag: hashText(`${algorithm}:${vectorCase.name}`) };
    expect(await runVectorCase(store, vectorCase, counter)).toEqual([]);
  });
});

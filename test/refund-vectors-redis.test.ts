/**
 * The refund vectors (test/vectors/refunds) on RedisStore: ioredis and node-redis, over one server and over a
 * 3-master Redis Cluster. Each case runs on a counter of its own.
 */
import { hashText } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { CLIENT_KINDS, clientKinds } from './support/client-kinds.js';
import { randomPrefix } from './support/redis.js';
import { loadRefundVectors, runRefundCase } from './vectors/refundVectors.js';

const cases = loadRefundVectors();
const kinds = clientKinds();

describe.each(CLIENT_KINDS)('refund vectors on %s', (kind) => {
  it.each(cases)('$algorithm: $name', async (vectorCase) => {
    const store = new RedisStore({
      client: kinds.clientOf(kind),
      prefix: randomPrefix('refund'),
      timeoutMs: 10_000,
      breaker: false,
    });
    const counter = { rule: 'refund', tag: hashText(`${vectorCase.algorithm}:${vectorCase.name}`) };
    const mismatches = await runRefundCase(store, vectorCase, counter);
    await store.close();
    expect(mismatches).toEqual([]);
  });
});

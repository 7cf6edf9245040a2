/**
 * RedisStore's `stateFormat` (packages/redis/src/stateFormat.ts): 'binary' writes a counter's state as a zero
 * byte and little-endian doubles; every store reads both formats whatever it writes. The two-step rollout the
 * package README describes rests on that: gateways writing text and gateways writing binary, sharing keys in the
 * middle of the second step, count every request once: after any mix of the two, a key's count is what one
 * store alone would have made of the same requests (never a request counted twice, never one lost). And the
 * store contract suite and the shared vectors hold with binary states.
 */
import { hashText } from '@sluice/core';
import { type AlgorithmName, type Check, ConfigError } from '@sluice/core/store';
import { loadVectors, runVectorCase } from '@sluice/core/testing';
import { RedisStore, type StateFormat } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { describeStoreContract } from './contract/store.js';
import { randomPrefix, redisSuite, scanKeys } from './support/redis.js';

const redis = redisSuite();

function storeFor(prefix: string, stateFormat: StateFormat): RedisStore {
  return new RedisStore({ client: redis.client, prefix, stateFormat, timeoutMs: 5000, breaker: false });
}

/** Every algorithm whose state is two or three numbers (sliding_log and concurrency keep sorted sets). */
const NUMBER_STATES: AlgorithmName[] = [
  'fixed_window',
  'first_request_window',
  'sliding_window',
  'token_bucket',
  'gcra',
  'leaky_bucket',
  'quota',
];

function check(algorithm: AlgorithmName, cost = 1): Check {
  return {
    rule: 'per_key',
    tag: 'tagAAAAAAAAAAAAAAAAAAA',
    algorithm,
    params: { limit: 20, windowMs: 60_000, burst: 20 },
    cost,
    mode: 'enforce',
  };
}

describe('binary state', () => {
  it('is a zero byte and two or three doubles, with a TTL', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix, 'binary');
    const now = 1_800_000_123_456;
    await store.evaluate([check('sliding_window', 2)], now);
    await store.evaluate([{ ...check('fixed_window'), rule: 'fixed' }], now);
    const keys = await scanKeys(redis.admin, prefix);
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      const state = (await redis.admin.getBuffer(key))!;
      expect(state[0]).toBe(0);
      if (key.endsWith(':sw')) {
        expect(state).toHaveLength(25);
        // window index, previous count, current count
        expect([1, 9, 17].map((at) => state.readDoubleLE(at))).toEqual([Math.floor(now / 60_000), 0, 2]);
      } else {
        expect(state).toHaveLength(17);
        expect([1, 9].map((at) => state.readDoubleLE(at))).toEqual([Math.floor(now / 60_000) * 60_000, 1]);
      }
      expect(await redis.admin.pttl(key)).toBeGreaterThan(0);
    }
  });

  it.each(NUMBER_STATES)(
    '%s: text and binary writers on the same key count each request once, in any order',
    async (algorithm) => {
      const mixed = randomPrefix('mix');
      const alone = randomPrefix('one');
      const text = storeFor(mixed, 'text');
      const binary = storeFor(mixed, 'binary');
      const reference = storeFor(alone, 'text');
      const start = 1_800_000_000_000;
      // 25 requests over 30 s (more than the limit of 20: some denied), the writer switching in a fixed,
      // irregular pattern, costs of 1 and 2.
      for (let i = 0; i < 25; i++) {
        const now = start + i * 1200;
        const cost = i % 4 === 3 ? 2 : 1;
        const writer = [0, 1, 1, 0, 1, 0, 0, 0, 1, 1][i % 10] === 1 ? binary : text;
        const [mine] = await writer.evaluate([check(algorithm, cost)], now);
        const [theirs] = await reference.evaluate([check(algorithm, cost)], now);
        expect({ i, ...mine }).toEqual({ i, ...theirs });
      }
    },
  );

  it('a state of the other format in a coalesced call of many requests reads the same', async () => {
    const prefix = randomPrefix();
    const binary = storeFor(prefix, 'binary');
    const text = storeFor(prefix, 'text');
    const now = 1_800_000_000_000;
    await text.evaluate([check('sliding_window', 5)], now);
    // Ten requests in one turn: one script call, the key read once (text) and written once (binary).
    const results = await Promise.all(
      Array.from({ length: 10 }, () => binary.evaluate([check('sliding_window')], now + 1)),
    );
    expect(results.map(([r]) => r!.remaining)).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5]);
    const [after] = await text.evaluate([check('sliding_window')], now + 2);
    expect(after!.remaining).toBe(4);
  });

  it('refuses a format it does not know', () => {
    expect(() => storeFor(randomPrefix(), 'packed' as StateFormat)).toThrow(ConfigError);
    expect(() => storeFor(randomPrefix(), 'packed' as StateFormat)).toThrow(
      "stateFormat must be 'text' or 'binary'",
    );
  });
});

describeStoreContract('RedisStore, binary state', async () => ({
  store: storeFor(randomPrefix('contract'), 'binary'),
}));

describe.each(loadVectors())('$algorithm vectors, binary state', ({ algorithm, cases }) => {
  it.each(cases)('$name', async (vectorCase) => {
    const store = storeFor(randomPrefix('vec'), 'binary');
    const counter = { rule: 'vector', tag: hashText(`${algorithm}:${vectorCase.name}`) };
    try {
      expect(await runVectorCase(store, vectorCase, counter)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

/**
 * How the evaluation scripts write a counter's state (packages/redis/src/script.ts, flush_states): the text is
 * the one earlier versions wrote (whole numbers as digits, others as '%.17g'), so gateways of two versions
 * sharing Redis during an upgrade read each other's state; and a key that already ends where its new state
 * does keeps its TTL (KEEPTTL) rather than having it set again, while a new window or period sets it anew.
 */
import type { AlgorithmName, Check, LimitParams } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite, scanKeys } from './support/redis.js';

const redis = redisSuite();
const WINDOW = 60_000;
/** Far beyond any TTL the scripts set for WINDOW: a TTL that stays this long was kept, not set again. */
const MARKER_MS = 3_600_000;

function check(algorithm: AlgorithmName, cost = 1, params: Partial<LimitParams> = {}): Check {
  return {
    rule: 'per_key',
    tag: 'tagAAAAAAAAAAAAAAAAAAA',
    algorithm,
    params: { limit: 100, windowMs: WINDOW, burst: 100, ...params },
    cost,
    mode: 'enforce',
  };
}

function storeFor(prefix: string): RedisStore {
  return new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
}

async function onlyKey(prefix: string): Promise<string> {
  const keys = await scanKeys(redis.admin, prefix);
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

describe('state text', () => {
  it('whole numbers are written as digits and fractions as %.17g, as before', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const now = 1_800_000_123_456;
    const w = Math.floor(now / WINDOW);
    await store.evaluate([check('sliding_window', 2)], now);
    const key = await onlyKey(prefix);
    expect(await redis.admin.get(key)).toBe(`${w} 0 2`);
    await store.evaluate([check('sliding_window', 0.1)], now + 1);
    expect(await redis.admin.get(key)).toBe(`${w} 0 2.1000000000000001`);
  });

  it('a state written by the previous format (%.17g, space separated) reads back', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const now = 1_800_000_123_456;
    const start = Math.floor(now / WINDOW) * WINDOW;
    await store.evaluate([check('fixed_window', 1, { limit: 10 })], now);
    const key = await onlyKey(prefix);
    await redis.admin.set(key, `${start} 7.5`, 'PX', WINDOW);
    const [result] = await store.evaluate([check('fixed_window', 1, { limit: 10 })], now + 1);
    expect(result!.remaining).toBe(1); // ceil(7.5) + 1 counted of 10
    expect(await redis.admin.get(key)).toBe(`${start} 9`);
  });
});

describe('key TTL', () => {
  it.each<AlgorithmName>(['sliding_window', 'fixed_window'])(
    '%s: a request in the same window keeps the TTL; one in a new window sets it',
    async (algorithm) => {
      const prefix = randomPrefix();
      const store = storeFor(prefix);
      const now = Math.floor(Date.now() / WINDOW) * WINDOW + 10;
      await store.evaluate([check(algorithm)], now);
      const key = await onlyKey(prefix);
      await redis.admin.pexpire(key, MARKER_MS);
      await store.evaluate([check(algorithm)], now + 5);
      expect(await redis.admin.pttl(key)).toBeGreaterThan(MARKER_MS - 60_000);
      const [result] = await store.evaluate([check(algorithm)], now + WINDOW);
      const ttl = await redis.admin.pttl(key);
      expect(ttl).toBeGreaterThan(result!.resetMs - 1000);
      expect(ttl).toBeLessThanOrEqual(result!.resetMs + 1000);
    },
  );

  it('a key first written by a call keeps no TTL it does not have: the call sets it', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const now = Math.floor(Date.now() / WINDOW) * WINDOW + 10;
    // Three requests on one key in one call (coalesced): the first creates the key, the others would keep.
    const results = await Promise.all(
      [1, 2, 3].map((i) => store.evaluate([check('sliding_window')], now + i)),
    );
    expect(results.every(([r]) => r!.allowed)).toBe(true);
    const ttl = await redis.admin.pttl(await onlyKey(prefix));
    expect(ttl).toBeGreaterThan(WINDOW);
    expect(ttl).toBeLessThanOrEqual(2 * WINDOW + 1000);
  });

  it.each<[AlgorithmName, string]>([
    ['sliding_window', 'one-rule'],
    ['fixed_window', 'one-rule'],
    ['quota', 'one-rule'],
    ['sliding_window', 'general'],
    ['fixed_window', 'general'],
  ])(
    '%s (%s script): a key with no TTL (restored, PERSISTed) written in the same window gets one',
    async (algorithm, script) => {
      const prefix = randomPrefix();
      const store = storeFor(prefix);
      const now = Math.floor(Date.now() / WINDOW) * WINDOW + 10;
      // A second rule on another key sends the call through the general script.
      const others = script === 'general' ? [{ ...check('fixed_window'), rule: 'other' }] : [];
      await store.evaluate([check(algorithm), ...others], now);
      const keys = await scanKeys(redis.admin, prefix);
      for (const key of keys) expect(await redis.admin.persist(key)).toBe(1);
      await store.evaluate([check(algorithm), ...others], now + 5);
      for (const key of keys) {
        const ttl = await redis.admin.pttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(2 * WINDOW + 1000);
      }
    },
  );
});

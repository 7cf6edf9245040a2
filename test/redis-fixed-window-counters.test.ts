/**
 * fixed_window's state on Redis (packages/redis/src/algorithms/fixedWindow.ts): an integer counter per window,
 * named from the rule's key and the window start, added to with INCRBY and kept until its window ends; the
 * previous version's "<start> <count>" in the rule's key carried over by a rolling deploy; refunds off the
 * charge's counter; a counter of the wrong type failing its request once, then deleted. On the one-rule and the
 * general script alike.
 */
import type { Check, Lease, LimitParams } from '@sluice/core/store';
import { KeyStateError, RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite, scanKeys } from './support/redis.js';

const redis = redisSuite();
const WINDOW = 60_000;
const TAG = 'tagFFFFFFFFFFFFFFFFFFFF';
/** Far beyond any TTL the scripts set for WINDOW: a TTL that stays this long was kept, not set again. */
const MARKER_MS = 3_600_000;

function check(limit = 5, cost = 1): Check {
  const params: LimitParams = { limit, windowMs: WINDOW, burst: limit };
  return { rule: 'r', tag: TAG, algorithm: 'fixed_window', params, cost, mode: 'enforce' };
}

/** A second rule in the request sends the call through the general script, not the one-rule one. */
const other: Check = { ...check(1000), rule: 'other', tag: 'tagOOOOOOOOOOOOOOOOOOO' };

/** A store on a fresh prefix, its rule's key, and evaluate / refund through the script under test. */
function setup(script: 'one-rule' | 'general') {
  const prefix = randomPrefix('fw');
  const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
  const extra = script === 'general' ? [other] : [];
  const declared = `${prefix}:{${TAG}}:r:fw`;
  return {
    prefix,
    store,
    declared,
    counter: (start: number) => `${declared}:${start}`,
    evaluate: async (c: Check, at: number) => (await store.evaluate([c, ...extra], at))[0]!,
    evaluateAll: (c: Check, at: number) => store.evaluate([c, ...extra], at),
    refund: (c: Check, charged: number, at: number) => {
      const lease: Lease = {
        rule: c.rule,
        tag: c.tag,
        algorithm: 'fixed_window',
        id: '',
        scope: 'store',
        refund: { cost: c.cost, params: c.params, at: charged, resetMs: 0, count: 'failed' },
      };
      return store.release([lease], at);
    },
  };
}

/** A time 10 ms into the current window: TTLs (Redis's clock) and windows (ours) agree. */
const windowNow = () => Math.floor(Date.now() / WINDOW) * WINDOW + 10;

describe.each(['one-rule', 'general'] as const)('fixed_window counters (%s script)', (script) => {
  it('one integer key per window, its TTL set when made and kept by later requests', async () => {
    const s = setup(script);
    const now = windowNow();
    const start = now - 10;
    await s.evaluate(check(), now);
    expect(await scanKeys(redis.admin, `${s.prefix}:{${TAG}}`)).toEqual([s.counter(start)]);
    expect(await redis.admin.get(s.counter(start))).toBe('1');
    const ttl = await redis.admin.pttl(s.counter(start));
    expect(ttl).toBeGreaterThan(WINDOW - 10 + 1000 - 2000);
    expect(ttl).toBeLessThanOrEqual(WINDOW - 10 + 1000);
    // A later request adds (INCRBY): the TTL the key has stays.
    await redis.admin.pexpire(s.counter(start), MARKER_MS);
    const second = await s.evaluate(check(5, 2), now + 5);
    expect(second).toMatchObject({ allowed: true, remaining: 2, resetMs: WINDOW - 15 });
    expect(await redis.admin.get(s.counter(start))).toBe('3');
    expect(await redis.admin.pttl(s.counter(start))).toBeGreaterThan(MARKER_MS - 60_000);
    // The next window counts in a key of its own; the last one is left to expire.
    const next = await s.evaluate(check(), start + WINDOW);
    expect(next).toMatchObject({ allowed: true, remaining: 4, resetMs: WINDOW });
    expect(await redis.admin.get(s.counter(start + WINDOW))).toBe('1');
    expect(await redis.admin.get(s.counter(start))).toBe('3');
    expect(await redis.admin.pttl(s.counter(start + WINDOW))).toBeGreaterThan(WINDOW);
    expect(await redis.admin.exists(s.declared)).toBe(0);
    await s.store.close();
  });

  it('a denied request writes nothing; a denial in the group leaves the counter alone', async () => {
    const s = setup(script);
    const now = windowNow();
    for (let i = 0; i < 2; i++) expect((await s.evaluate(check(2), now + i)).allowed).toBe(true);
    expect((await s.evaluate(check(2), now + 2)).allowed).toBe(false);
    expect(await redis.admin.get(s.counter(now - 10))).toBe('2');
    await s.store.close();
  });

  it("rolling deploy: the previous version's count of this window is carried into the new counter", async () => {
    const s = setup(script);
    const now = windowNow();
    const start = now - 10;
    await redis.admin.set(s.declared, `${start} 3`, 'PX', WINDOW);
    expect(await s.evaluate(check(), now)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await redis.admin.get(s.counter(start))).toBe('4');
    // Once the counter exists the old state is no longer read: the previous version's key is left as it was.
    expect(await s.evaluate(check(), now + 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await redis.admin.get(s.counter(start))).toBe('5');
    expect(await redis.admin.get(s.declared)).toBe(`${start} 3`);
    expect(await s.evaluate(check(), now + 2)).toMatchObject({ allowed: false, remaining: 0 });
    await s.store.close();
  });

  it("rolling deploy: the previous version's count of an earlier window is not carried", async () => {
    const s = setup(script);
    const now = windowNow();
    await redis.admin.set(s.declared, `${now - 10 - WINDOW} 3`, 'PX', WINDOW);
    expect(await s.evaluate(check(), now)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await redis.admin.get(s.counter(now - 10))).toBe('1');
    await s.store.close();
  });

  it("a refund comes off its window's counter, never below 0, only while that window runs", async () => {
    const s = setup(script);
    const now = windowNow();
    const start = now - 10;
    await s.evaluate(check(5, 3), now);
    await redis.admin.pexpire(s.counter(start), MARKER_MS);
    await s.refund(check(5, 2), now, now + 1);
    expect(await redis.admin.get(s.counter(start))).toBe('1');
    expect(await redis.admin.pttl(s.counter(start))).toBeGreaterThan(MARKER_MS - 60_000);
    await s.refund(check(5, 2), now, now + 2);
    expect(await redis.admin.get(s.counter(start))).toBe('0');
    expect(await s.evaluate(check(5, 5), now + 3)).toMatchObject({ allowed: true, remaining: 0 });
    // After its window, a charge's refund gives nothing back (the next window's counter stays).
    await s.evaluate(check(5, 2), start + WINDOW);
    await s.refund(check(5, 2), now + 3, start + WINDOW + 1);
    expect(await redis.admin.get(s.counter(start))).toBe('5');
    expect(await redis.admin.get(s.counter(start + WINDOW))).toBe('2');
    await s.store.close();
  });

  it("a refund of a charge the previous version counted comes off the previous version's state", async () => {
    const s = setup(script);
    const now = windowNow();
    const start = now - 10;
    await redis.admin.set(s.declared, `${start} 4`, 'PX', WINDOW);
    await s.refund(check(5, 3), now, now + 1);
    expect(await redis.admin.get(s.declared)).toBe(`${start} 1`);
    await s.store.close();
  });

  it('a counter of the wrong type fails its request once, then is deleted and counts afresh', async () => {
    const s = setup(script);
    const now = windowNow();
    await redis.admin.hset(s.counter(now - 10), 'x', '1');
    await expect(s.evaluateAll(check(), now)).rejects.toBeInstanceOf(KeyStateError);
    expect(await redis.admin.exists(s.counter(now - 10))).toBe(0);
    expect(await s.evaluate(check(), now + 1)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await redis.admin.get(s.counter(now - 10))).toBe('1');
    await s.store.close();
  });
});

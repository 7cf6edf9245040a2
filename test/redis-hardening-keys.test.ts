/**
 * One request's bad key stays that request's problem: a key of the wrong type (written by anything) fails
 * only the request that reads it, in a coalesced call of many; the others are decided and counted; the
 * bad key is reported by rule (never by key or value) and removed; the breaker stays closed.
 */
import { compileRules, createLimiter, type Decision, parseRules, StoreError } from '@sluice/core';
import { KeyStateError, RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite, scanKeys, scriptCalls } from './support/redis.js';

const redis = redisSuite();

const RULES = compileRules(
  parseRules(`
domain: keys
rules:
  - name: per_user
    match: {}
    key: [user]
    limit: {requests: 100, per: 60s}
    algorithm: fixed_window
  - name: per_user_log
    match: {route: /log}
    key: [user]
    limit: {requests: 100, per: 60s}
    algorithm: sliding_log
`),
);

/** A limiter on a fresh prefix, its store, and what its observer heard about store errors. */
function setUp(breaker: { failures: number; cooldownMs: number } = { failures: 2, cooldownMs: 60_000 }) {
  const prefix = randomPrefix();
  const errors: Error[] = [];
  const store = new RedisStore({
    client: redis.client,
    prefix,
    timeoutMs: 5000,
    breaker,
    logger: { warn: () => {} },
  });
  const limiter = createLimiter({
    rules: RULES,
    store,
    timeoutMs: 10_000,
    observer: { onStoreError: (_kind, error) => errors.push(error) },
  });
  return { prefix, store, limiter, errors };
}

/** The only key of a rule under `prefix` (the victim's, after its first request). */
async function keyOf(prefix: string, rule: string): Promise<string> {
  const keys = (await scanKeys(redis.admin, prefix)).filter((key) => key.includes(`:${rule}:`));
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

/** Replaces a key by a list (the wrong type), as a stray LPUSH would. */
async function spoil(key: string): Promise<void> {
  await redis.admin.del(key);
  await redis.admin.lpush(key, 'secret-looking-value');
}

const failedOpen = (decisions: Decision[]) => decisions.filter((d) => d.failedOpen).length;

describe('a key of the wrong type', () => {
  it('fails only its own request of a coalesced call; the others are decided and counted in the same one call', async () => {
    const { prefix, limiter, errors } = setUp();
    await limiter.check({ user: 'victim' });
    const victimKey = await keyOf(prefix, 'per_user');
    await spoil(victimKey);

    const before = await scriptCalls(redis.admin);
    const users = Array.from({ length: 12 }, (_, i) => (i === 5 ? 'victim' : `user${i}`));
    const decisions = await Promise.all(users.map((user) => limiter.check({ user })));
    expect(await scriptCalls(redis.admin)).toBe(before + 1); // still one round trip for all twelve

    expect(failedOpen(decisions)).toBe(1);
    expect(decisions[5]).toMatchObject({ allowed: true, failedOpen: true, reason: 'store_error' });
    for (const [i, decision] of decisions.entries()) {
      if (i === 5) continue;
      expect(decision).toMatchObject({ allowed: true, failedOpen: false, remaining: 99 });
    }
    // The error names the rule, never the key, its tag or the value found there.
    expect(errors).toHaveLength(1);
    const error = errors[0]!;
    expect(error).toBeInstanceOf(KeyStateError);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as KeyStateError).rules).toEqual(['per_user']);
    expect(error.message).toContain('per_user');
    expect(error.message).not.toContain(victimKey.split('{')[1]!.split('}')[0]!);
    expect(error.message).not.toContain('secret-looking-value');

    // Repaired: the list is gone and the victim counts afresh from its next request.
    expect(await redis.admin.exists(victimKey)).toBe(0);
    const next = await limiter.check({ user: 'victim' });
    expect(next).toMatchObject({ allowed: true, failedOpen: false, remaining: 99 });
    expect(await redis.admin.type(victimKey)).toBe('string');
    await limiter.close();
  });

  it('spoiled again and again, it never opens the breaker for everyone else', async () => {
    const { prefix, store, limiter } = setUp({ failures: 2, cooldownMs: 60_000 });
    await limiter.check({ user: 'victim' });
    const victimKey = await keyOf(prefix, 'per_user');
    for (let round = 0; round < 6; round++) {
      await spoil(victimKey);
      const decisions = await Promise.all(
        ['victim', 'a', 'b', 'c'].map((user) => limiter.check({ user: `${user}` })),
      );
      expect(decisions.map((d) => d.failedOpen)).toEqual([true, false, false, false]);
      expect(store.health().breaker).toBe('closed');
    }
    expect(store.health()).toMatchObject({ connected: true, breaker: 'closed', pending: 0 });
    expect(store.health().failingOpenSince).toBeUndefined();
    await limiter.close();
  });

  it('in a request of two rules, fails that request whole (nothing counted) and repairs only the bad rule', async () => {
    const { prefix, limiter, errors } = setUp();
    const victim = { user: 'victim', route: '/log' };
    await limiter.check(victim);
    const logKey = await keyOf(prefix, 'per_user_log');
    const counterKey = await keyOf(prefix, 'per_user');
    const counterBefore = await redis.admin.get(counterKey);
    await redis.admin.del(logKey);
    await redis.admin.set(logKey, 'not a sorted set');

    const [bad, other] = await Promise.all([
      limiter.check(victim),
      limiter.check({ user: 'other', route: '/log' }),
    ]);
    expect(bad).toMatchObject({ failedOpen: true, reason: 'store_error' });
    expect(other).toMatchObject({ failedOpen: false, allowed: true, remaining: 99 });
    expect((errors[0] as KeyStateError).rules).toEqual(['per_user_log']);
    expect(await redis.admin.get(counterKey)).toBe(counterBefore); // the failed request counted nothing
    expect(await redis.admin.exists(logKey)).toBe(0); // the bad key went
    expect(await redis.admin.exists(counterKey)).toBe(1); // the good one stayed

    const after = await limiter.check(victim);
    expect(after).toMatchObject({ failedOpen: false, allowed: true });
    expect(after.results.find((r) => r.rule === 'per_user')!.remaining).toBe(98);
    await limiter.close();
  });

  it('a lease set of the wrong type fails only that release, is removed, and leaves the breaker closed', async () => {
    const prefix = randomPrefix();
    const store = new RedisStore({
      client: redis.client,
      prefix,
      timeoutMs: 5000,
      breaker: { failures: 1, cooldownMs: 60_000 },
      logger: { warn: () => {} },
    });
    const lease = (tag: string, id: string) => ({
      rule: 'jobs',
      tag,
      algorithm: 'concurrency' as const,
      params: { limit: 2, windowMs: 60_000, burst: 2 },
      cost: 1,
      mode: 'enforce' as const,
      leaseId: id,
    });
    const bad = lease('leaseTagAAAAAAAAAAAAAA', 'l1');
    const good = lease('leaseTagBBBBBBBBBBBBBB', 'l2');
    await store.evaluate([bad], Date.now());
    await store.evaluate([good], Date.now());
    const badSet = `${prefix}:{${bad.tag}}:jobs:cc`;
    await redis.admin.del(badSet);
    await redis.admin.set(badSet, 'garbage');

    const toLease = (c: typeof bad) => ({
      rule: c.rule,
      tag: c.tag,
      algorithm: 'concurrency' as const,
      id: c.leaseId,
      scope: 'store' as const,
    });
    await expect(store.release([toLease(bad)], Date.now())).rejects.toMatchObject({ rules: ['jobs'] });
    expect(await redis.admin.exists(badSet)).toBe(0);
    expect(store.health().breaker).toBe('closed');
    await store.release([toLease(good)], Date.now());
    expect(await redis.admin.zcard(`${prefix}:{${good.tag}}:jobs:cc`)).toBe(0);
    expect((await store.evaluate([bad], Date.now()))[0]).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('without coalescing too, one call per request: only that request fails', async () => {
    const prefix = randomPrefix();
    const store = new RedisStore({
      client: redis.client,
      prefix,
      coalesce: false,
      timeoutMs: 5000,
      logger: { warn: () => {} },
    });
    const check = (tag: string) => ({
      rule: 'solo',
      tag,
      algorithm: 'gcra' as const,
      params: { limit: 10, windowMs: 1000, burst: 10 },
      cost: 1,
      mode: 'enforce' as const,
    });
    await redis.admin.hset(`${prefix}:{soloTagAAAAAAAAAAAAAAA}:solo:gc`, 'f', 'v');
    const [bad, good] = await Promise.allSettled([
      store.evaluate([check('soloTagAAAAAAAAAAAAAAA')], Date.now()),
      store.evaluate([check('soloTagBBBBBBBBBBBBBBB')], Date.now()),
    ]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'ERR_SLUICE_STORE', rules: ['solo'] } });
    expect(good).toMatchObject({ status: 'fulfilled', value: [{ allowed: true }] });
    expect(await redis.admin.exists(`${prefix}:{soloTagAAAAAAAAAAAAAAA}:solo:gc`)).toBe(0);
  });
});

/**
 * Corrupt or huge counter state in Redis (a value past 2^53 written by hand, a restored dump, another tool): the
 * scripts deny or count afresh, never admit beyond the limit, and the numbers they answer are exact integers.
 */
import { compileRules, createLimiter } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName, type Check } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { decideByName } from '../packages/core/src/algorithms/index.js';
import { randomPrefix, redisSuite, scanKeys } from './support/redis.js';

const redis = redisSuite();
const LIMIT = 5;
const WINDOW = 60_000;
/** The value of the report: past 2^53, so a double cannot hold it exactly. */
const HUGE = '9008995388950584';
const VALUES = [HUGE, '9008995388950585', `-${HUGE}`, '1e308', '-0', '0.5', 'nan', 'inf', `${HUGE}.5`];

function check(algorithm: AlgorithmName): Check {
  return {
    rule: 'hostile',
    tag: 'tagBBBBBBBBBBBBBBBBBBBB',
    algorithm,
    params: { limit: LIMIT, windowMs: WINDOW, burst: LIMIT },
    cost: 1,
    mode: 'enforce',
    ...(algorithm === 'concurrency' ? { leaseId: 'leaseAAAAAAAAAAAAAAAA' } : {}),
  };
}

/** Every string key of the prefix with each of its numbers in turn replaced by HUGE: one state per position. */
async function hugeStates(prefix: string): Promise<[string, string][]> {
  const states: [string, string][] = [];
  for (const key of await scanKeys(redis.admin, `${prefix}:{${check('fixed_window').tag}}`)) {
    if ((await redis.admin.type(key)) !== 'string') continue;
    const parts = (await redis.admin.get(key))!.split(' ');
    for (const value of VALUES) {
      parts.forEach((_, i) => {
        states.push([key, parts.map((part, j) => (j === i ? value : part)).join(' ')]);
      });
      states.push([key, parts.map(() => value).join(' ')]);
    }
  }
  return states;
}

const stringStates = ALGORITHM_NAMES.filter((name) => name !== 'concurrency' && name !== 'sliding_log');

/** A second rule in the same request sends the call through the general script, not the one-rule one. */
const other: Check = {
  rule: 'other',
  tag: 'tagCCCCCCCCCCCCCCCCCCCC',
  algorithm: 'fixed_window',
  params: { limit: 1000, windowMs: WINDOW, burst: 1000 },
  cost: 1,
  mode: 'enforce',
};

describe.each(
  stringStates.flatMap((algorithm) => [
    { algorithm, script: 'one-rule', extra: [] as Check[] },
    { algorithm, script: 'general', extra: [other] },
  ]),
)('$algorithm with a huge number in its stored state ($script script)', ({ algorithm, extra }) => {
  it('never admits more than the limit, and answers exact integers', async () => {
    const prefix = randomPrefix();
    const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
    const now = 1_800_000_000_000;
    await store.evaluate([check(algorithm), ...extra], now);
    const states = await hugeStates(prefix);
    expect(states.length).toBeGreaterThan(0);
    for (const [key, state] of states) {
      await redis.admin.set(key, state, 'PX', WINDOW * 10);
      let allowed = 0;
      for (let i = 0; i <= LIMIT; i++) {
        const [result] = await store.evaluate([check(algorithm), ...extra], now + 1 + i);
        if (result!.allowed) allowed++;
        for (const n of [result!.limit, result!.remaining, result!.resetMs, result!.retryAfterMs]) {
          expect(Number.isSafeInteger(n), `${state}: ${JSON.stringify(result)}`).toBe(true);
        }
        expect(result!.remaining).toBeLessThanOrEqual(LIMIT);
      }
      expect(allowed, `state "${state}" of ${algorithm}`).toBeLessThanOrEqual(LIMIT);
    }
    await store.close();
  });
});

describe('sorted-set states with a huge cost', () => {
  it('sliding_log: a stored entry costing a huge number never admits', async () => {
    const prefix = randomPrefix();
    const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
    const now = 1_800_000_000_000;
    await store.evaluate([check('sliding_log')], now);
    const [key] = await scanKeys(redis.admin, prefix);
    await redis.admin.del(key!);
    await redis.admin.zadd(key!, String(now), `${now}:${HUGE}`);
    const [result] = await store.evaluate([check('sliding_log')], now + 1);
    expect(result!.allowed).toBe(false);
    await store.close();
  });
  it('concurrency: a lease costing a huge number never admits', async () => {
    const prefix = randomPrefix();
    const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
    const now = Date.now();
    await store.evaluate([{ ...check('concurrency'), leaseId: 'leaseBBBBBBBBBBBBBBBB' }], now);
    const keys = await scanKeys(redis.admin, prefix);
    const set = keys.find((k) => k.endsWith('cc')) ?? keys[0]!;
    const weights = `${set}:w`;
    await redis.admin.hset(weights, 'leaseBBBBBBBBBBBBBBBB', HUGE);
    const [result] = await store.evaluate([check('concurrency')], now + 1);
    expect(result!.allowed).toBe(false);
    await store.close();
  });
});

describe('a TAT far in the future (the report: the current TAT plus 2^53 + 5 ms)', () => {
  it.each(['gcra', 'leaky_bucket'] as const)(
    '%s: denies as a full bucket, as core does, and never admits while it stands',
    async (algorithm) => {
      const prefix = randomPrefix();
      const store = new RedisStore({ client: redis.client, prefix });
      const rules = compileRules({
        domain: 'far',
        rules: [{ name: 'far', key: ['ip'], algorithm, limit: { requests: 10, per: '1m' } }],
      });
      const limiter = createLimiter({ rules, store });
      const ip = { ip: '192.0.2.9' };
      expect(await limiter.check(ip)).toMatchObject({ allowed: true, remaining: 9 });
      const [key] = await scanKeys(redis.admin, prefix);
      const [tat, sub] = (await redis.admin.get(key!))!.split(' ');
      const far = `${BigInt(tat!) + 2n ** 53n + 5n} ${sub}`;
      await redis.admin.set(key!, far, 'KEEPTTL');

      for (let i = 0; i < 11; i++) {
        const decision = await limiter.check(ip);
        expect(decision).toMatchObject({ allowed: false, remaining: 0, failedOpen: false });
        // One interval (6 s) to wait, not the far TAT: whole numbers a header can carry.
        expect(decision.retryAfterMs).toBe(6000);
      }
      expect(await redis.admin.get(key!)).toBe(far);
      // MemoryStore's algorithm reads the same numbers the same way.
      const params = { limit: 10, windowMs: 60_000, burst: 10 };
      const state = { tat: Number(far.split(' ')[0]), sub: Number(sub) };
      expect(decideByName(algorithm, state, Date.now(), params, 1, 'me')).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: 6000,
      });
      await limiter.close();
      await store.close();
    },
  );
});

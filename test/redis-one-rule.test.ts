/**
 * The one-rule script (packages/redis/src/oneRuleScript.ts) must answer and write exactly as the general
 * evaluation script: the same random turns of single-check requests (hot keys repeated within a turn, costs,
 * time steps) go through both, on two prefixes of one real redis-server, and every reply and every key
 * written must be the same. Plus: a key it cannot read fails its own request only, and RedisStore takes the
 * lean script for one plain check and the general one otherwise.
 */
import { ALGORITHM_NAMES, type AlgorithmName, type Check, type LimitParams } from '@sluice/core/store';
import { EVALUATE_SCRIPT, luaAlgorithms, RedisStore } from '@sluice/redis';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { oneRuleArgv, oneRuleOf, oneRuleScript } from '../packages/redis/src/oneRuleScript.js';
import { evaluateArgv, type Group } from '../packages/redis/src/scriptCall.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const T0 = Date.UTC(2026, 0, 31, 23, 59, 0);
const TAGS = ['tagA', 'tagB', 'tagC'];

const usesBurst = (a: AlgorithmName) => a === 'token_bucket' || a === 'gcra' || a === 'leaky_bucket';

function paramsArb(algorithm: AlgorithmName): fc.Arbitrary<LimitParams> {
  return fc
    .record({
      limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(0), fc.integer({ min: 7, max: 1000 })),
      windowMs: fc.constantFrom(1000, 7000, 60_000),
      extraBurst: fc.integer({ min: 0, max: 4 }),
      period: fc.constantFrom(undefined, 'day', 'month'),
    })
    .map(({ limit, windowMs, extraBurst, period }): LimitParams => {
      const calendar = algorithm === 'quota' && period !== undefined;
      return {
        limit,
        windowMs: calendar ? 0 : windowMs,
        burst: usesBurst(algorithm) ? limit + extraBurst : limit,
        ...(calendar ? { period } : {}),
      } as LimitParams;
    });
}

const requestArb = fc.record({
  tag: fc.constantFrom(...TAGS),
  cost: fc.integer({ min: 0, max: 3 }),
  mode: fc.constantFrom<'enforce' | 'shadow'>('enforce', 'enforce', 'shadow'),
});
const turnArb = fc.record({
  stepMs: fc.integer({ min: 0, max: 4000 }),
  requests: fc.array(requestArb, { minLength: 1, maxLength: 5 }),
});

async function run(client: Redis, lua: string, argv: (string | number)[]): Promise<unknown> {
  const sha = (await client.script('LOAD', lua)) as string;
  return client.call('EVALSHA', sha, ...argv);
}

/** Every key of a prefix as type and content (TTL left out: PX counts from when each SET ran). */
async function dump(client: Redis, prefix: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await client.keys(`${prefix}:*`)).sort()) {
    const name = key.slice(prefix.length);
    const type = await client.type(key);
    if (type === 'string') out[name] = await client.get(key);
    else if (type === 'zset') out[name] = await client.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'hash') out[name] = await client.hgetall(key);
    else out[name] = type;
    expect(await client.pttl(key), name).toBeGreaterThan(0);
  }
  return out;
}

describe('one-rule script against the general script', () => {
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: the same replies and the same keys for random turns`, async () => {
      const lean = luaAlgorithms[algorithm];
      await fc.assert(
        fc.asyncProperty(
          paramsArb(algorithm),
          fc.array(turnArb, { minLength: 1, maxLength: 12 }),
          async (params, turns) => {
            const general = randomPrefix('g');
            const one = randomPrefix('o');
            let now = T0;
            let lease = 0;
            for (const turn of turns) {
              now += turn.stepMs;
              const groups: Group[] = turn.requests.map(({ tag, cost, mode }) => {
                const check: Check = { rule: 'r', tag, algorithm, params, cost, mode };
                return {
                  checks: [algorithm === 'concurrency' ? { ...check, leaseId: `l${lease++}` } : check],
                  now,
                };
              });
              expect(oneRuleOf(groups)).toBe(lean);
              const expected = await run(
                redis.client,
                EVALUATE_SCRIPT,
                evaluateArgv(groups, { prefix: general, redisClock: false }),
              );
              const got = await run(
                redis.client,
                oneRuleScript(lean).lua,
                oneRuleArgv(groups, lean, { prefix: one, redisClock: false }),
              );
              expect(got).toEqual(expected);
            }
            expect(await dump(redis.client, one)).toEqual(await dump(redis.client, general));
          },
        ),
        { numRuns: 15 },
      );
    });
  }
});

describe('one-rule script', () => {
  const params = { limit: 5, windowMs: 60_000, burst: 5 };
  const check = (tag: string): Check => ({
    rule: 'r',
    tag,
    algorithm: 'sliding_window',
    params,
    cost: 1,
    mode: 'enforce',
  });

  it('a key it cannot read fails its own request only, and is deleted', async () => {
    const prefix = randomPrefix('bad');
    await redis.client.hset(`${prefix}:{tagB}:r:sw`, 'x', '1');
    const groups = ['tagA', 'tagB', 'tagC'].map((tag) => ({ checks: [check(tag)], now: T0 }));
    const lean = luaAlgorithms.sliding_window;
    const reply = (await run(
      redis.client,
      oneRuleScript(lean).lua,
      oneRuleArgv(groups, lean, { prefix, redisClock: false }),
    )) as unknown[];
    expect(reply.slice(0, 2)).toEqual([1, 5]);
    expect(reply.slice(7, 14)).toEqual([-1, 1, 0, 0, 0, '', '']);
    expect(reply.slice(14, 16)).toEqual([1, 5]);
    expect(await redis.client.exists(`${prefix}:{tagB}:r:sw`)).toBe(0);
    expect(await redis.client.get(`${prefix}:{tagA}:r:sw`)).not.toBeNull();
  });

  it('with the Redis clock, decides on Redis TIME as the general script does', async () => {
    const prefix = randomPrefix('time');
    const groups = [
      { checks: [check('tagA')], now: 0 },
      { checks: [check('tagA')], now: 0 },
    ];
    const lean = luaAlgorithms.sliding_window;
    const reply = (await run(
      redis.client,
      oneRuleScript(lean).lua,
      oneRuleArgv(groups, lean, { prefix, redisClock: true }),
    )) as unknown[];
    expect([reply[0], reply[2], reply[7], reply[9]]).toEqual([1, 4, 1, 3]);
    const [stored] = (await redis.client.get(`${prefix}:{tagA}:r:sw`))!.split(' ');
    const seconds = Number((await redis.client.time())[0]);
    expect(Math.abs(Number(stored) - Math.floor((seconds * 1000) / 60_000))).toBeLessThanOrEqual(1);
  });

  it('is not taken for several checks, a policy, a refund or two different limits', () => {
    const plain = { checks: [check('tagA')], now: T0 };
    expect(oneRuleOf([plain, plain])).toBe(luaAlgorithms.sliding_window);
    expect(oneRuleOf([{ checks: [check('tagA'), check('tagB')], now: T0 }])).toBeUndefined();
    expect(oneRuleOf([{ checks: [{ ...check('tagA'), policy: { penalty: 2 } }], now: T0 }])).toBeUndefined();
    expect(oneRuleOf([{ ...plain, refund: true }])).toBeUndefined();
    expect(
      oneRuleOf([plain, { checks: [{ ...check('tagB'), params: { ...params, limit: 6 } }], now: T0 }]),
    ).toBeUndefined();
    expect(
      oneRuleOf([plain, { checks: [{ ...check('tagB'), algorithm: 'gcra' }], now: T0 }]),
    ).toBeUndefined();
  });

  it('RedisStore sends one plain check by the lean script and two checks by the general one', async () => {
    await redis.admin.script('FLUSH');
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix('store'),
      breaker: false,
      timeoutMs: 2000,
    });
    const lean = oneRuleScript(luaAlgorithms.sliding_window).sha;
    const general = (await import('../packages/redis/src/script.js')).EVALUATE_SCRIPT;
    const generalSha = (await redis.admin.script('LOAD', general)) as string;
    await redis.admin.script('FLUSH');
    const [first] = await store.evaluate([check('tagA')], T0);
    expect(first).toMatchObject({ allowed: true, remaining: 4 });
    expect(await redis.admin.script('EXISTS', lean, generalSha)).toEqual([1, 0]);
    const both = await store.evaluate([check('tagA'), { ...check('tagA'), rule: 's' }], T0);
    expect(both.map((r) => r.remaining)).toEqual([3, 4]);
    expect(await redis.admin.script('EXISTS', lean, generalSha)).toEqual([1, 1]);
    await store.close();
  });
});

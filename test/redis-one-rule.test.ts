/**
 * The lean scripts must answer and write exactly as the general evaluation script, on two prefixes of one real
 * redis-server, every reply and every key written the same:
 * - the one-rule script (packages/redis/src/oneRuleScript.ts): random turns of single-check requests (hot keys
 *   repeated within a turn, costs, time steps);
 * - the one-algorithm script (packages/redis/src/oneAlgorithmScript.ts): random turns of requests of one to three
 *   checks of one algorithm (a rule per key, per tenant and a global one, each with its own limits and mode; keys
 *   repeated within a group, across the groups of a turn and across turns).
 * Plus: the all-or-nothing rule of a group, keys they cannot read, the Redis clock, and which script RedisStore
 * takes for which call.
 */
import {
  ALGORITHM_NAMES,
  type AlgorithmName,
  type Check,
  type LimitParams,
  type Mode,
} from '@sluice/core/store';
import { EVALUATE_SCRIPT, luaAlgorithms, RedisStore } from '@sluice/redis';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  leanCallOf,
  oneAlgorithmArgv,
  oneAlgorithmOf,
  oneAlgorithmScript,
} from '../packages/redis/src/oneAlgorithmScript.js';
import { oneRuleArgv, oneRuleOf, oneRuleScript } from '../packages/redis/src/oneRuleScript.js';
import { evaluateArgv, type Group } from '../packages/redis/src/scriptCall.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const T0 = Date.UTC(2026, 0, 31, 23, 59, 0);
const TAGS = ['tagA', 'tagB', 'tagC'];

/** The benchmark's shape: a rule per API key, one per tenant, a global one (a hot key shared by every request). */
const RULES = { key: ['kA', 'kB', 'kC'], tenant: ['t1', 't2'], global: ['all'] } as const;
type RuleName = keyof typeof RULES;
const RULE_NAMES = Object.keys(RULES) as RuleName[];

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

/** Each rule's limits and mode: different limits per rule, enforcing or shadow. */
function rulesArb(algorithm: AlgorithmName) {
  const rule = fc.record({
    params: paramsArb(algorithm),
    mode: fc.constantFrom<Mode>('enforce', 'enforce', 'shadow'),
  });
  return fc.record({ key: rule, tenant: rule, global: rule });
}

/** A check of a request: which rule, which of its tags, its cost. */
const checkArb = fc.record({
  rule: fc.constantFrom(...RULE_NAMES),
  pick: fc.nat(),
  cost: fc.integer({ min: 0, max: 3 }),
});
const groupArb = fc.oneof(
  fc.array(checkArb, { minLength: 1, maxLength: 3 }),
  // The common shape: per key, per tenant, global, in that order.
  fc
    .tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 2 }))
    .map(([key, tenant, cost]) => RULE_NAMES.map((rule, i) => ({ rule, pick: [key, tenant, 0][i]!, cost }))),
);
const groupTurnArb = fc.record({
  stepMs: fc.integer({ min: 0, max: 4000 }),
  requests: fc.array(groupArb, { minLength: 1, maxLength: 5 }),
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

/**
 * Random turns through the general script on one prefix and a lean script on another: every reply, then every key,
 * the same. `groupsOf`: a turn's groups at its now (`lease`: a new concurrency lease id); `lean`: the lean script
 * and its argv for them.
 */
async function sameAsGeneral<T extends { stepMs: number }>(
  turns: readonly T[],
  groupsOf: (turn: T, now: number, lease: () => string) => Group[],
  lean: (groups: Group[], prefix: string) => [string, (string | number)[]],
): Promise<void> {
  const general = randomPrefix('g');
  const one = randomPrefix('o');
  let now = T0;
  let leases = 0;
  for (const turn of turns) {
    now += turn.stepMs;
    const groups = groupsOf(turn, now, () => `l${leases++}`);
    const expected = await run(
      redis.client,
      EVALUATE_SCRIPT,
      evaluateArgv(groups, { prefix: general, redisClock: false }),
    );
    expect(await run(redis.client, ...lean(groups, one))).toEqual(expected);
  }
  expect(await dump(redis.client, one)).toEqual(await dump(redis.client, general));
}

describe('one-rule script against the general script', () => {
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: the same replies and the same keys for random turns`, async () => {
      const lean = luaAlgorithms[algorithm];
      await fc.assert(
        fc.asyncProperty(
          paramsArb(algorithm),
          fc.array(turnArb, { minLength: 1, maxLength: 12 }),
          (params, turns) =>
            sameAsGeneral(
              turns,
              (turn, now, lease) => {
                const groups = turn.requests.map(({ tag, cost, mode }): Group => {
                  const check: Check = { rule: 'r', tag, algorithm, params, cost, mode };
                  return {
                    checks: [algorithm === 'concurrency' ? { ...check, leaseId: lease() } : check],
                    now,
                  };
                });
                expect(oneRuleOf(groups)).toBe(lean);
                return groups;
              },
              (groups, prefix) => [
                oneRuleScript(lean).lua,
                oneRuleArgv(groups, lean, { prefix, redisClock: false }),
              ],
            ),
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
});

/** Runs `groups` through the general script on one prefix and the one-algorithm script on another. */
async function both(groups: Group[], general: string, one: string, redisClock = false) {
  const lean = oneAlgorithmOf(groups)!;
  expect(lean).toBeDefined();
  const expected = await run(
    redis.client,
    EVALUATE_SCRIPT,
    evaluateArgv(groups, { prefix: general, redisClock }),
  );
  const got = await run(
    redis.client,
    oneAlgorithmScript(lean).lua,
    oneAlgorithmArgv(groups, lean, { prefix: one, redisClock }),
  );
  return { expected: expected as unknown[], got: got as unknown[] };
}

describe('one-algorithm script against the general script', () => {
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: the same replies and the same keys for random turns of groups`, async () => {
      await fc.assert(
        fc.asyncProperty(
          rulesArb(algorithm),
          fc.array(groupTurnArb, { minLength: 1, maxLength: 10 }),
          (rules, turns) =>
            sameAsGeneral(
              turns,
              (turn, now, lease) =>
                turn.requests.map((request) => ({
                  checks: request.map(({ rule, pick, cost }): Check => {
                    const tags = RULES[rule];
                    const { params, mode } = rules[rule];
                    const check: Check = {
                      rule,
                      tag: tags[pick % tags.length]!,
                      algorithm,
                      params,
                      cost,
                      mode,
                    };
                    return algorithm === 'concurrency' ? { ...check, leaseId: lease() } : check;
                  }),
                  now,
                })),
              (groups, prefix) => {
                const lean = oneAlgorithmOf(groups)!;
                expect(lean).toBe(luaAlgorithms[algorithm]);
                return [
                  oneAlgorithmScript(lean).lua,
                  oneAlgorithmArgv(groups, lean, { prefix, redisClock: false }),
                ];
              },
            ),
        ),
        { numRuns: 15 },
      );
    });
  }
});

describe('one-algorithm script', () => {
  const check = (rule: string, tag: string, limit: number, mode: Mode = 'enforce'): Check => ({
    rule,
    tag,
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode,
  });

  it('a denial by an enforcing check leaves the group untouched; a shadow denial does not block', async () => {
    const general = randomPrefix('g');
    const prefix = randomPrefix('deny');
    // tenant t1 has room for one request: the second request's key counter must not move.
    const request = (key: string, tenantMode: Mode = 'enforce') => [
      check('key', key, 10),
      check('tenant', 't1', 1, tenantMode),
      check('global', 'all', 100),
    ];
    const groups: Group[] = [
      { checks: request('kA'), now: T0 },
      { checks: request('kB'), now: T0 },
      { checks: request('kC', 'shadow'), now: T0 },
    ];
    const { expected, got } = await both(groups, general, prefix);
    expect(got).toEqual(expected);
    const allowed = (reply: unknown[]) => reply.filter((_, i) => i % 7 === 0);
    expect(allowed(got)).toEqual([1, 1, 1, 1, 0, 1, 1, 0, 1]);
    const count = async (name: string) =>
      (await redis.client.get(`${prefix}:${name}:fw`))?.split(' ')[1] ?? null;
    expect(await count('{kA}:key')).toBe('1');
    expect(await count('{kB}:key')).toBeNull();
    expect(await count('{kC}:key')).toBe('1');
    // Two requests counted: the shadow denial of the third did not stop it.
    expect(await count('{all}:global')).toBe('2');
    expect(await count('{t1}:tenant')).toBe('1');
    expect(await dump(redis.client, prefix)).toEqual(await dump(redis.client, general));
  });

  it('a key it cannot read fails its own group only, and is deleted, as the general script does', async () => {
    const general = randomPrefix('g');
    const prefix = randomPrefix('bad');
    for (const p of [general, prefix]) await redis.client.hset(`${p}:{t2}:tenant:fw`, 'x', '1');
    const request = (key: string, tenant: string) => [
      check('key', key, 10),
      check('tenant', tenant, 10),
      check('global', 'all', 100),
    ];
    // The third request shares the unreadable tenant key: deleted by the second's failure, it counts afresh.
    const groups: Group[] = [
      { checks: request('kA', 't1'), now: T0 },
      { checks: request('kB', 't2'), now: T0 },
      { checks: request('kC', 't2'), now: T0 },
    ];
    const { expected, got } = await both(groups, general, prefix);
    expect(got).toEqual(expected);
    expect(got.slice(21, 42)).toEqual([
      ...[-1, 0, 0, 0, 0, '', ''],
      ...[-1, 1, 0, 0, 0, '', ''],
      ...[-1, 0, 0, 0, 0, '', ''],
    ]);
    expect(got.slice(42).filter((_, i) => i % 7 < 3)).toEqual([1, 10, 9, 1, 10, 9, 1, 100, 98]);
    expect(await redis.client.get(`${prefix}:{t2}:tenant:fw`)).toMatch(/ 1$/);
    expect(await redis.client.exists(`${prefix}:{kB}:key:fw`)).toBe(0);
    expect((await redis.client.get(`${prefix}:{all}:global:fw`))?.split(' ')[1]).toBe('2');
    expect(await dump(redis.client, prefix)).toEqual(await dump(redis.client, general));
  });

  it('with the Redis clock, decides on Redis TIME as the general script does', async () => {
    const general = randomPrefix('g');
    const prefix = randomPrefix('time');
    // An hour's window: the two calls, a few ms apart, fall in the same one.
    const hourly = (rule: string, tag: string, limit: number): Check => ({
      ...check(rule, tag, limit),
      algorithm: 'sliding_window',
      params: { limit, windowMs: 3_600_000, burst: limit },
    });
    const request = (key: string) => [hourly('key', key, 3), hourly('global', 'all', 5)];
    const groups: Group[] = [0, 1, 2].map(() => ({ checks: request('kA'), now: 0 }));
    const { expected, got } = await both(groups, general, prefix, true);
    // reset and retry count from each call's own TIME: compare allowed, limit and remaining.
    const decided = (reply: unknown[]) => reply.filter((_, i) => i % 7 < 3);
    expect(decided(got)).toEqual(decided(expected));
    expect(decided(got)).toEqual([1, 3, 2, 1, 5, 4, 1, 3, 1, 1, 5, 3, 1, 3, 0, 1, 5, 2]);
    expect(await dump(redis.client, prefix)).toEqual(await dump(redis.client, general));
    const [stored] = (await redis.client.get(`${prefix}:{all}:global:sw`))!.split(' ');
    const seconds = Number((await redis.client.time())[0]);
    expect(Math.abs(Number(stored) - Math.floor((seconds * 1000) / 3_600_000))).toBeLessThanOrEqual(1);
  });

  it('defines no function it never calls, and none of the failure path before it is needed', () => {
    for (const name of ALGORITHM_NAMES) {
      const lua = oneAlgorithmScript(luaAlgorithms[name]).lua;
      for (const [, fn] of lua.matchAll(/^local function (\w+)\(/gm)) {
        const uses = lua.split('\n').filter((line) => new RegExp(`(?<![\\w.])${fn}\\b`).test(line));
        expect(uses.length, `${name}: ${fn}`).toBeGreaterThan(1);
      }
      expect(lua.indexOf('local function unreadable(')).toBeGreaterThan(lua.indexOf('pcall(run_groups)'));
      for (const absent of ['POLICY', 'ALGORITHMS', 'now_of', 'function answer(', 'function commit('])
        expect(lua, absent).not.toContain(absent);
    }
  });

  it('is not taken for a policy, a refund, a renewal or two algorithms', () => {
    const plain: Group = { checks: [check('key', 'kA', 5), check('global', 'all', 9, 'shadow')], now: T0 };
    const settings = { prefix: 'p', redisClock: false };
    expect(
      leanCallOf(
        plain.checks.slice(0, 1).map((c) => ({ checks: [c], now: T0 })),
        settings,
      )?.script,
    ).toBe(oneRuleScript(luaAlgorithms.fixed_window));
    expect(leanCallOf([plain, plain], settings)?.script).toBe(oneAlgorithmScript(luaAlgorithms.fixed_window));
    // One check per group, but rules of different limits: the one-algorithm script.
    expect(
      leanCallOf(
        plain.checks.map((c) => ({ checks: [c], now: T0 })),
        settings,
      )?.script,
    ).toBe(oneAlgorithmScript(luaAlgorithms.fixed_window));
    const policy = { ...plain.checks[0]!, policy: { penalty: 2 } };
    expect(leanCallOf([plain, { checks: [policy], now: T0 }], settings)).toBeUndefined();
    expect(leanCallOf([{ ...plain, refund: true }], settings)).toBeUndefined();
    expect(leanCallOf([plain, { ...plain, renew: true }], settings)).toBeUndefined();
    const gcra = { ...plain.checks[1]!, algorithm: 'gcra' as const };
    expect(leanCallOf([{ checks: [plain.checks[0]!, gcra], now: T0 }], settings)).toBeUndefined();
  });

  it('RedisStore takes the one-rule, one-algorithm or general script as the call needs', async () => {
    await redis.admin.script('FLUSH');
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix('store'),
      breaker: false,
      timeoutMs: 2000,
    });
    const oneRule = oneRuleScript(luaAlgorithms.fixed_window).sha;
    const oneAlgorithm = oneAlgorithmScript(luaAlgorithms.fixed_window).sha;
    const generalSha = (await redis.admin.script('LOAD', EVALUATE_SCRIPT)) as string;
    await redis.admin.script('FLUSH');
    const loaded = () => redis.admin.script('EXISTS', oneRule, oneAlgorithm, generalSha);
    const [first] = await store.evaluate([check('key', 'kA', 5)], T0);
    expect(first).toMatchObject({ allowed: true, remaining: 4 });
    expect(await loaded()).toEqual([1, 0, 0]);
    const three = await store.evaluate(
      [check('key', 'kA', 5), check('tenant', 't1', 7, 'shadow'), check('global', 'all', 9)],
      T0,
    );
    expect(three.map((r) => r.remaining)).toEqual([3, 6, 8]);
    expect(await loaded()).toEqual([1, 1, 0]);
    const banned = { ...check('key', 'kA', 5), policy: { ban: { after: 3, withinMs: 1000, forMs: 1000 } } };
    await store.evaluate([banned, check('global', 'all', 9)], T0);
    expect(await loaded()).toEqual([1, 1, 1]);
    await store.close();
  });
});

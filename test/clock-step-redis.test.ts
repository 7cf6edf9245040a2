/**
 * Clock steps and corrupt state on a real RedisStore over a private redis-server. The Lua decides exactly
 * as core's pure functions when the clock steps back or forward by any amount, and reads what another
 * writer left in a key (garbage, NaN, negative or fractional counts, a state an hour or a year ahead) as
 * core does: whole, non-negative answers no longer than the rule's longest wait, never more admitted than
 * the stored count allows, and the key repaired by the next allowed request.
 */

import { compileRules, createLimiter, hashText } from '@sluice/core';
import {
  ALGORITHM_NAMES,
  type AlgorithmName,
  type Check,
  type CheckResult,
  type LimitParams,
} from '@sluice/core/store';
import { luaAlgorithms, RedisStore } from '@sluice/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { decideByName } from '../packages/core/src/algorithms/index.js';
import { type RedisServer, randomPrefix, startRedis } from './support/redis.js';

const T = Date.UTC(2026, 10, 30, 12, 0); // Monday 2026-11-30 12:00 UTC, a multiple of every window here
const W = 60_000;
const HOUR = 3_600_000;
const YEAR = 365 * 86_400_000;
const DAY = 86_400_000;
const RULE = 'r';

let server: RedisServer;
let client: Redis;
let store: RedisStore;
let prefix: string;
let counter = 0;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({ host: server.host, port: server.port });
  prefix = randomPrefix('clock');
  store = new RedisStore({ client, prefix, timeoutMs: 5000, breaker: false });
});
afterAll(async () => {
  await store.close();
  client.disconnect();
  await server.stop();
});

/** A counter nobody has used yet. */
function freshTag(): string {
  counter += 1;
  return hashText(`clock-step-${counter}`);
}

/** The Redis key of a counter's n-th key (as the store names it). */
function keyOf(algorithm: AlgorithmName, tag: string, n = 0): string {
  return `${prefix}:{${tag}}:${RULE}:${luaAlgorithms[algorithm].keys[n]}`;
}

function checkOf(algorithm: AlgorithmName, tag: string, params: LimitParams, cost: number): Check {
  const check: Check = { rule: RULE, tag, algorithm, params, cost, mode: 'enforce' };
  return algorithm === 'concurrency' ? { ...check, leaseId: 'me' } : check;
}

async function evaluate(
  algorithm: AlgorithmName,
  tag: string,
  params: LimitParams,
  cost: number,
  at: number,
): Promise<CheckResult> {
  const [result] = await store.evaluate([checkOf(algorithm, tag, params, cost)], at);
  if (result === undefined) throw new Error('the store returned no result');
  return result;
}

/** The numbers a client sees; delayMs only where the algorithm gives one. */
function visible(r: CheckResult): Record<string, unknown> {
  const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs } = r;
  return delayMs === undefined
    ? { allowed, limit, remaining, resetMs, retryAfterMs }
    : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs };
}

const isBucket = (a: AlgorithmName) => a === 'token_bucket' || a === 'gcra' || a === 'leaky_bucket';

describe('RedisStore decides as the pure algorithms when the clock steps', () => {
  const params = fc
    .record({
      limit: fc.integer({ min: 1, max: 12 }),
      windowMs: fc.constantFrom(1000, 7000, 60_000),
      extra: fc.integer({ min: 0, max: 4 }),
    })
    .map(({ limit, windowMs, extra }) => ({ limit, windowMs, extra }));
  const steps = fc.array(
    fc.record({
      jump: fc.oneof(
        fc.constant(0),
        fc.integer({ min: -70_000, max: 70_000 }),
        fc.integer({ min: -1500, max: 100 }),
        fc.constantFrom(-HOUR, HOUR, -YEAR, -1),
      ),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 15 })),
    }),
    { minLength: 1, maxLength: 30 },
  );

  it.each(ALGORITHM_NAMES)('%s: random steps back and forward, an hour, a year', async (algorithm) => {
    await fc.assert(
      fc.asyncProperty(params, steps, async (base, sequence) => {
        const p: LimitParams = {
          limit: base.limit,
          windowMs: base.windowMs,
          burst: isBucket(algorithm) ? base.limit + base.extra : base.limit,
        };
        const tag = freshTag();
        let state: unknown;
        let at = T;
        for (const [index, { jump, cost }] of sequence.entries()) {
          at += jump;
          const expected = decideByName(algorithm, state, at, p, cost, 'me');
          if (expected.allowed) state = expected.state;
          const actual = await evaluate(algorithm, tag, p, cost, at);
          expect(visible(actual), `step ${index} at T${at - T >= 0 ? '+' : ''}${at - T}`).toEqual(
            visible(expected),
          );
        }
      }),
      { numRuns: Number(process.env.SLUICE_FC_RUNS ?? 40) },
    );
  });
});

/** One state written into Redis by something else, then one request at T. */
interface CorruptCase {
  readonly name: string;
  readonly algorithm: AlgorithmName;
  /** What is written into the counter's keys before the request. */
  readonly write: (keys: readonly string[]) => Promise<unknown>;
  /** The same state as core's algorithm would hold it, where it can be written as one. */
  readonly state?: unknown;
  readonly cost?: number;
  readonly params?: LimitParams;
  readonly expect: Partial<Record<'allowed' | 'remaining' | 'retryAfterMs' | 'resetMs' | 'delayMs', unknown>>;
  /** What the first key holds after the request, when it was allowed and rewrote it. */
  readonly after?: string;
}

const FIVE = { limit: 5, windowMs: W, burst: 5 };
const w = T / W;
const DEC_1 = Date.UTC(2026, 11, 1);
const set = (value: string) => (keys: readonly string[]) => client.set(keys[0]!, value);
const zadd =
  (...pairs: (string | number)[]) =>
  (keys: readonly string[]) =>
    client.zadd(keys[0]!, ...pairs);

const corrupt: CorruptCase[] = [
  // fixed_window: "<start> <count>"
  {
    name: 'garbage',
    algorithm: 'fixed_window',
    write: set('garbage'),
    expect: { allowed: true, remaining: 4 },
    after: `${T} 1`,
  },
  {
    name: 'nan nan',
    algorithm: 'fixed_window',
    write: set('nan nan'),
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a negative count reads as 0, never as room beyond the limit',
    algorithm: 'fixed_window',
    write: set(`${T} -7`),
    state: { start: T, count: -7 },
    expect: { allowed: true, remaining: 4 },
    after: `${T} 1`,
  },
  {
    name: 'a fractional count is rounded up',
    algorithm: 'fixed_window',
    write: set(`${T} 2.5`),
    state: { start: T, count: 2.5 },
    expect: { allowed: true, remaining: 1 },
  },
  {
    name: 'the next window, full (clock stepped back): denied for at most one window',
    algorithm: 'fixed_window',
    write: set(`${T + W} 5`),
    state: { start: T + W, count: 5 },
    expect: { allowed: false, remaining: 0, retryAfterMs: W, resetMs: W },
  },
  {
    name: 'a window a year ahead is stale: counted afresh and overwritten',
    algorithm: 'fixed_window',
    write: set(`${T + YEAR} 5`),
    state: { start: T + YEAR, count: 5 },
    expect: { allowed: true, remaining: 4 },
    after: `${T} 1`,
  },
  {
    name: 'an infinite start',
    algorithm: 'fixed_window',
    write: set('inf 3'),
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a start 30.5 s ahead that is not a whole ms is corrupt: no fractional wait',
    algorithm: 'fixed_window',
    write: set(`${T + 30_000.5} 3`),
    state: { start: T + 30_000.5, count: 3 },
    expect: { allowed: true, remaining: 4, resetMs: W },
  },
  // sliding_window: "<window index> <prev> <curr>"
  {
    name: 'an hour ahead is stale',
    algorithm: 'sliding_window',
    write: set(`${w + 60} 5 5`),
    state: { window: w + 60, prev: 5, curr: 5 },
    expect: { allowed: true, remaining: 4, resetMs: 2 * W },
    after: `${w} 0 1`,
  },
  {
    name: 'one window ahead, full: decided as at its start',
    algorithm: 'sliding_window',
    write: set(`${w + 1} 0 5`),
    state: { window: w + 1, prev: 0, curr: 5 },
    expect: { allowed: false, remaining: 0, retryAfterMs: W + 12_000, resetMs: 2 * W },
  },
  {
    name: 'negative counts read as 0',
    algorithm: 'sliding_window',
    write: set(`${w} -3 -3`),
    state: { window: w, prev: -3, curr: -3 },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a window index that is not whole',
    algorithm: 'sliding_window',
    write: set('1.5 2 2'),
    state: { window: 1.5, prev: 2, curr: 2 },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'nan counts',
    algorithm: 'sliding_window',
    write: set(`${w} nan 1`),
    state: { window: w, prev: Number.NaN, curr: 1 },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'two numbers where three belong',
    algorithm: 'sliding_window',
    write: set(`${w} 5`),
    expect: { allowed: true, remaining: 4 },
  },
  // gcra: "<TAT whole ms> <sub>" (5 per minute: 12 s apart, tolerance one minute)
  {
    name: 'a TAT an hour ahead is stale',
    algorithm: 'gcra',
    write: set(`${T + HOUR} 0`),
    state: { tat: T + HOUR, sub: 0 },
    expect: { allowed: true, remaining: 4, resetMs: 12_000 },
    after: `${T + 12_000} 0`,
  },
  {
    name: 'a TAT 90 s ahead reads as a full bucket: wait one interval, not 42 s',
    algorithm: 'gcra',
    write: set(`${T + 90_000} 0`),
    state: { tat: T + 90_000, sub: 0 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000, resetMs: W },
  },
  {
    name: 'a TAT 2^53 + 5 ms ahead is no clock time but a debt past any limit: a full bucket',
    algorithm: 'gcra',
    write: set(`${BigInt(T) + 2n ** 53n + 5n} 0`),
    state: { tat: T + 2 ** 53 + 5, sub: 0 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000, resetMs: W },
  },
  {
    name: 'garbage TAT',
    algorithm: 'gcra',
    write: set('soon later'),
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a negative sub-millisecond part',
    algorithm: 'gcra',
    write: set(`${T} -100000`),
    state: { tat: T, sub: -100_000 },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a TAT of nan',
    algorithm: 'gcra',
    write: set('nan 0'),
    state: { tat: Number.NaN, sub: 0 },
    expect: { allowed: true, remaining: 4 },
  },
  // leaky_bucket: as gcra, with a delay
  {
    name: 'a queue 90 s long reads as full',
    algorithm: 'leaky_bucket',
    write: set(`${T + 90_000} 0`),
    state: { tat: T + 90_000, sub: 0 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000, delayMs: 0 },
  },
  {
    name: 'a queue 30 s long: the delay is exact',
    algorithm: 'leaky_bucket',
    write: set(`${T + 30_000} 0`),
    state: { tat: T + 30_000, sub: 0 },
    expect: { allowed: true, remaining: 1, delayMs: 30_000 },
  },
  {
    name: 'a queue past 2^53 ms long reads as full',
    algorithm: 'leaky_bucket',
    write: set(`${T} ${2n ** 53n + 5n}`),
    state: { tat: T, sub: 2 ** 53 + 5 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000, delayMs: 0 },
  },
  {
    name: 'a queue a year long is stale',
    algorithm: 'leaky_bucket',
    write: set(`${T + YEAR} 0`),
    state: { tat: T + YEAR, sub: 0 },
    expect: { allowed: true, remaining: 4, delayMs: 0 },
  },
  // token_bucket: "<tokens x windowMs> <time>"
  {
    name: 'counted an hour ahead is stale: a full bucket',
    algorithm: 'token_bucket',
    write: set(`300000 ${T + HOUR}`),
    state: { tokens: 300_000, at: T + HOUR },
    expect: { allowed: true, remaining: 4 },
    after: `240000 ${T}`,
  },
  {
    name: 'empty, counted 30 s ahead: still empty, one interval to wait',
    algorithm: 'token_bucket',
    write: set(`0 ${T + 30_000}`),
    state: { tokens: 0, at: T + 30_000 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000 },
  },
  {
    name: 'negative tokens read as an empty bucket, never as a fuller one',
    algorithm: 'token_bucket',
    write: set(`-50 ${T}`),
    state: { tokens: -50, at: T },
    expect: { allowed: false, remaining: 0, retryAfterMs: 12_000 },
  },
  {
    name: 'nan tokens',
    algorithm: 'token_bucket',
    write: set(`nan ${T}`),
    state: { tokens: Number.NaN, at: T },
    expect: { allowed: true, remaining: 4 },
  },
  // sliding_log: sorted set, score = time, member = "<time>:<cost>"
  {
    name: 'an entry an hour ahead is stale and removed',
    algorithm: 'sliding_log',
    write: zadd(T + HOUR, `${T + HOUR}:5`),
    state: { entries: [{ at: T + HOUR, cost: 5 }] },
    expect: { allowed: true, remaining: 4, resetMs: W },
  },
  {
    name: 'an entry 30 s ahead counts: wait at most the window',
    algorithm: 'sliding_log',
    write: zadd(T + 30_000, `${T + 30_000}:5`),
    state: { entries: [{ at: T + 30_000, cost: 5 }] },
    expect: { allowed: false, remaining: 0, retryAfterMs: W, resetMs: W },
  },
  {
    name: 'a member without a cost',
    algorithm: 'sliding_log',
    write: zadd(T - 1000, 'garbage'),
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a negative cost',
    algorithm: 'sliding_log',
    write: zadd(T - 1000, `${T - 1000}:-3`),
    state: { entries: [{ at: T - 1000, cost: -3 }] },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a fractional cost is rounded up',
    algorithm: 'sliding_log',
    write: zadd(T - 1000, `${T - 1000}:2.5`),
    state: { entries: [{ at: T - 1000, cost: 2.5 }] },
    expect: { allowed: true, remaining: 1 },
  },
  {
    name: 'an entry at a fractional time: the wait rounds up to a whole ms',
    algorithm: 'sliding_log',
    write: zadd(T - 1000.5, `${T - 1000.5}:5`),
    state: { entries: [{ at: T - 1000.5, cost: 5 }] },
    expect: { allowed: false, remaining: 0, retryAfterMs: W - 1000, resetMs: W - 1000 },
  },
  // concurrency: sorted set of lease ids scored by expiry, and a hash of costs
  {
    name: 'a lease expiring in a year is stale',
    algorithm: 'concurrency',
    write: (k) => client.zadd(k[0]!, T + YEAR, 'x').then(() => client.hset(k[1]!, 'x', '5')),
    state: { leases: [{ id: 'x', expiresAt: T + YEAR, cost: 5 }] },
    expect: { allowed: true, remaining: 4, resetMs: W },
  },
  {
    name: 'a lease expiring in 90 s counts, the wait is at most the window',
    algorithm: 'concurrency',
    write: (k) => client.zadd(k[0]!, T + 90_000, 'x').then(() => client.hset(k[1]!, 'x', '5')),
    state: { leases: [{ id: 'x', expiresAt: T + 90_000, cost: 5 }] },
    expect: { allowed: false, remaining: 0, retryAfterMs: W, resetMs: W },
  },
  {
    name: 'a negative lease cost',
    algorithm: 'concurrency',
    write: (k) => client.zadd(k[0]!, T + 1000, 'x').then(() => client.hset(k[1]!, 'x', '-4')),
    state: { leases: [{ id: 'x', expiresAt: T + 1000, cost: -4 }] },
    expect: { allowed: true, remaining: 4 },
  },
  {
    name: 'a lease cost that is not a number counts as the default 1',
    algorithm: 'concurrency',
    write: (k) => client.zadd(k[0]!, T + 1000, 'x').then(() => client.hset(k[1]!, 'x', 'abc')),
    expect: { allowed: true, remaining: 3 },
  },
  {
    name: 'a lease expiring at a fractional time: the wait rounds up to a whole ms',
    algorithm: 'concurrency',
    write: (k) => client.zadd(k[0]!, T + 1000.5, 'x').then(() => client.hset(k[1]!, 'x', '5')),
    state: { leases: [{ id: 'x', expiresAt: T + 1000.5, cost: 5 }] },
    expect: { allowed: false, remaining: 0, retryAfterMs: 1001, resetMs: 1001 },
  },
  // quota per calendar month
  {
    name: 'next month spent (clock stepped back): denied until the end of that month at most',
    algorithm: 'quota',
    params: { limit: 5, windowMs: 0, burst: 5, period: 'month' },
    write: set(`${DEC_1} 5`),
    state: { start: DEC_1, count: 5 },
    expect: { allowed: false, remaining: 0, retryAfterMs: 31 * DAY, resetMs: 31 * DAY },
  },
  {
    name: 'a month a year ahead is stale',
    algorithm: 'quota',
    params: { limit: 5, windowMs: 0, burst: 5, period: 'month' },
    write: set(`${Date.UTC(2027, 11, 1)} 5`),
    state: { start: Date.UTC(2027, 11, 1), count: 5 },
    expect: { allowed: true, remaining: 4 },
    after: `${Date.UTC(2026, 10, 1)} 1`,
  },
];

describe('RedisStore reads corrupt and far-future state', () => {
  it.each(corrupt)('$algorithm: $name', async (c) => {
    const tag = freshTag();
    const params = c.params ?? FIVE;
    const keys = luaAlgorithms[c.algorithm].keys.map((_, n) => keyOf(c.algorithm, tag, n));
    await c.write(keys);
    const result = await evaluate(c.algorithm, tag, params, c.cost ?? 1, T);
    expect(result).toMatchObject(c.expect);
    if (c.state !== undefined) {
      // The same state held by MemoryStore gets the same answer from core.
      expect(visible(decideByName(c.algorithm, c.state, T, params, c.cost ?? 1, 'me'))).toEqual(
        visible(result),
      );
    }
    if (c.after !== undefined) expect(await client.get(keys[0]!)).toBe(c.after);
  });

  it('sliding_log: the stale entry is gone once a request commits', async () => {
    const tag = freshTag();
    const key = keyOf('sliding_log', tag);
    await client.zadd(key, T + HOUR, `${T + HOUR}:5`);
    expect(await evaluate('sliding_log', tag, FIVE, 1, T)).toMatchObject({ allowed: true });
    expect(await client.zrange(key, 0, -1)).toEqual([`${T}:1`]);
    // A year-ahead TTL-less key does not lock anyone out: the limit applies from now.
    for (let i = 0; i < 4; i++) await evaluate('sliding_log', tag, FIVE, 1, T + 1 + i);
    expect(await evaluate('sliding_log', tag, FIVE, 1, T + 10)).toMatchObject({
      allowed: false,
      remaining: 0,
    });
  });

  it('concurrency: the stale lease is gone once a request commits', async () => {
    const tag = freshTag();
    const [set, weights] = [keyOf('concurrency', tag, 0), keyOf('concurrency', tag, 1)];
    await client.zadd(set, T + YEAR, 'x');
    await client.hset(weights, 'x', '5');
    expect(await evaluate('concurrency', tag, FIVE, 2, T)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await client.zrange(set, 0, -1)).toEqual(['me']);
    expect(await client.hget(weights, 'me')).toBe('2');
  });
});

/** A number a corrupt key could hold: near T, a few windows off, far off, fractional, negative, infinite. */
const someNumber = fc.oneof(
  fc.integer({ min: -3 * W, max: 3 * W }).map((d) => T + d),
  fc.double({ min: T - 3 * W, max: T + 3 * W, noNaN: true }),
  fc.integer({ min: -3, max: 3 }).map((k) => T + k * W),
  fc.integer({ min: -50, max: 50 }),
  fc.double({ noNaN: true }),
  fc.constantFrom(T + HOUR, T - YEAR, T + YEAR),
);
const stringNumber = fc.oneof(
  { weight: 9, arbitrary: someNumber },
  { weight: 1, arbitrary: fc.constant(Number.NaN) },
);

/** A corrupt state as core holds it, and the write that puts the same numbers into Redis. */
interface Written {
  readonly state: unknown;
  readonly write: (keys: readonly string[]) => Promise<unknown>;
}

const twoNumbers = (a: string, b: string): fc.Arbitrary<Written> =>
  fc
    .tuple(stringNumber, stringNumber)
    .map(([x, y]) => ({ state: { [a]: x, [b]: y }, write: set(`${x} ${y}`) }));

function writtenState(algorithm: AlgorithmName): fc.Arbitrary<Written> {
  switch (algorithm) {
    case 'fixed_window':
    case 'first_request_window':
    case 'quota':
      return twoNumbers('start', 'count');
    case 'token_bucket':
      return twoNumbers('tokens', 'at');
    case 'gcra':
    case 'leaky_bucket':
      return twoNumbers('tat', 'sub');
    case 'sliding_window':
      return fc
        .tuple(
          fc.oneof(
            someNumber.map((x) => Math.floor(x / W)),
            stringNumber,
          ),
          stringNumber,
          stringNumber,
        )
        .map(([window, prev, curr]) => ({
          state: { window, prev, curr },
          write: set(`${window} ${prev} ${curr}`),
        }));
    case 'sliding_log':
      return fc.array(fc.record({ at: someNumber, cost: stringNumber }), { maxLength: 4 }).map((entries) => {
        const unique = [...new Map(entries.map((e) => [e.at, e])).values()];
        return {
          state: { entries: unique.sort((a, b) => a.at - b.at) },
          write: (k) =>
            unique.length === 0
              ? Promise.resolve()
              : client.zadd(k[0]!, ...unique.flatMap((e) => [e.at, `${e.at}:${e.cost}`])),
        };
      });
    case 'concurrency':
      return fc
        .array(fc.record({ expiresAt: someNumber, cost: someNumber }), { maxLength: 4 })
        .map((list) => {
          const leases = list.map((l, i) => ({ id: `x${i}`, ...l }));
          return {
            state: { leases },
            write: async (k) => {
              for (const l of leases) {
                await client.zadd(k[0]!, l.expiresAt, l.id);
                await client.hset(k[1]!, l.id, String(l.cost));
              }
            },
          };
        });
  }
}

describe('RedisStore reads any corrupt state exactly as core reads the same numbers', () => {
  it.each(ALGORITHM_NAMES)('%s', async (algorithm) => {
    await fc.assert(
      fc.asyncProperty(
        writtenState(algorithm),
        fc.integer({ min: 0, max: 7 }),
        async ({ state, write }, cost) => {
          const tag = freshTag();
          await write(luaAlgorithms[algorithm].keys.map((_, n) => keyOf(algorithm, tag, n)));
          const actual = await evaluate(algorithm, tag, FIVE, cost, T);
          expect(visible(actual)).toEqual(visible(decideByName(algorithm, state, T, FIVE, cost, 'me')));
        },
      ),
      { numRuns: Number(process.env.SLUICE_FC_RUNS ?? 150) },
    );
  });
});

describe('a limiter on RedisStore, every option on its default, when the system clock steps back an hour', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(['fixed_window', 'sliding_window'] as const)(
    '%s: an exhausted window stays exhausted, during the step and after the clock returns',
    async (algorithm) => {
      // Only Date is faked: Redis, its client and the monotonic clock run for real.
      vi.useFakeTimers({ toFake: ['Date'], now: T + 30_000 });
      const rules = compileRules({
        domain: `clock_${algorithm}`,
        rules: [{ name: 'r', key: ['ip'], algorithm, limit: { requests: 5, per: '1m' } }],
      });
      const limiter = createLimiter({
        rules,
        store: new RedisStore({ client, prefix: randomPrefix('step') }),
      });
      const ip = { ip: '192.0.2.7' };
      for (let i = 0; i < 5; i++) expect((await limiter.check(ip)).allowed).toBe(true);
      expect((await limiter.check(ip)).allowed).toBe(false);

      vi.setSystemTime(T + 30_000 - HOUR);
      const stepped = await limiter.check(ip);
      expect(stepped).toMatchObject({ allowed: false, remaining: 0, failedOpen: false });
      // Decided as the window it is in: no hour-long lock-out either.
      expect(stepped.retryAfterMs).toBeGreaterThan(0);
      expect(stepped.retryAfterMs).toBeLessThanOrEqual(2 * W);

      vi.setSystemTime(T + 31_000); // the clock returns, within the same window
      expect(await limiter.check(ip)).toMatchObject({ allowed: false, remaining: 0 });
      await limiter.close();
    },
  );
});

/**
 * gcra (and leaky_bucket, which keeps the same state) read a TAT ahead of now: within a tolerance, the debt; up to
 * two, a full bucket (a clock that stepped back); further, a clock a year ahead, stale; but a TAT or part past 2^53
 * is no time any clock writes: a debt past any limit, which denies as a full bucket (the Lua reads it alike:
 * test/redis-hostile-state.test.ts, test/clock-step-redis.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { decideByName } from './index.js';

const T = Date.UTC(2026, 10, 30, 12, 0);
const YEAR = 365 * 86_400_000;
const params = { limit: 10, windowMs: 60_000, burst: 10 }; // one unit per 6 s, a tolerance of one minute

describe.each(['gcra', 'leaky_bucket'] as const)('%s reads a TAT far ahead', (name) => {
  it.each([
    ['the current TAT plus 2^53 + 5 ms (the report)', { tat: T + 6000 + 2 ** 53 + 5, sub: 0 }],
    ['a TAT of 2^60', { tat: 2 ** 60, sub: 0 }],
    ['a TAT of 1e300', { tat: 1e300, sub: 0 }],
    ['a sub-millisecond part past 2^53', { tat: T, sub: 2 ** 53 + 5 }],
  ])('%s: a full bucket, denied for one interval', (_, state) => {
    for (const cost of [1, 3]) {
      expect(decideByName(name, state, T, params, cost, 'me')).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: 6000 * cost,
        resetMs: 60_000,
      });
    }
  });

  it.each([
    ['a year ahead', { tat: T + YEAR, sub: 0 }],
    ['infinitely ahead', { tat: Number.POSITIVE_INFINITY, sub: 0 }],
    ['a TAT of NaN with a huge part', { tat: Number.NaN, sub: 2 ** 60 }],
  ])('%s: stale or unreadable, counted afresh', (_, state) => {
    expect(decideByName(name, state, T, params, 1, 'me')).toMatchObject({ allowed: true, remaining: 9 });
  });
});

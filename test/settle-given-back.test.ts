/**
 * Issue 40, settle's answer: `givenBack` is what the store really gave back. For each algorithm that counts
 * units, on MemoryStore and on a private Redis, a reservation of 400 is settled at 100 at three moments (within
 * the window, part drained, after a fixed window rolled over); the answer's `givenBack` must equal the change of
 * the rule's remaining that the settle made (read with cost-0 checks at the same instant), and the figures the
 * algorithm promises.
 */
import { type AlgorithmName, compileRules, createLimiter, MemoryStore, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { privateRedis } from './long-lived/privateRedis.js';
import { randomPrefix } from './support/redis.js';

/** 10 s into a minute: a fixed window of 1m rolls over 50 s later. */
const T = Date.UTC(2026, 11, 1, 12, 0, 10);

/** Settled at: 2 s later (all counted), 12 s later (a bucket drained 200 of 400), 55 s later (window gone). */
const AT = [2_000, 12_000, 55_000] as const;

/** 1000 tokens a `per`, 400 reserved at `start`, settled at 100 at each moment: what is given back of 300. */
interface Case {
  readonly algorithm: AlgorithmName;
  readonly per: string;
  readonly start: number;
  readonly at: readonly number[];
  readonly expected: readonly number[];
}

const CASES: readonly Case[] = [
  { algorithm: 'fixed_window', per: '1m', start: T, at: AT, expected: [300, 300, 0] },
  { algorithm: 'sliding_window', per: '1m', start: T, at: AT, expected: [300, 300, 0] },
  { algorithm: 'sliding_log', per: '1m', start: T, at: [...AT, 61_000], expected: [300, 300, 300, 0] },
  { algorithm: 'gcra', per: '1m', start: T, at: AT, expected: [300, 200, 0] },
  { algorithm: 'token_bucket', per: '1m', start: T, at: AT, expected: [300, 200, 0] },
  // Its window opens with the key's first request: still open 55 s later, gone 61 s later.
  { algorithm: 'first_request_window', per: '1m', start: T, at: [55_000, 61_000], expected: [300, 0] },
  // A daily quota reserved 10 s before midnight (UTC): settled 5 s before, and 5 s after.
  {
    algorithm: 'quota',
    per: 'day',
    start: Date.UTC(2026, 11, 1, 23, 59, 50),
    at: [5_000, 15_000],
    expected: [300, 0],
  },
];

function tokenRule(name: string, algorithm: AlgorithmName, per = '1m') {
  return {
    name,
    key: ['api_key'],
    algorithm,
    limit: { requests: 1000, per },
    cost: { descriptor: 'max_tokens', max: 1000 },
    settle: true,
  };
}

const ask = (tokens: number) => ({ api_key: 'k1', max_tokens: String(tokens) });

/** Each algorithm's givenBack at each moment, with the change of remaining it made. */
async function givenBackAgainstRemaining(store: () => Store) {
  for (const { algorithm, per, start, at, expected } of CASES) {
    for (const [i, offset] of at.entries()) {
      let now = start;
      const rules = compileRules({ rules: [tokenRule('tpm', algorithm, per)] });
      const limiter = createLimiter({ rules, store: store(), clock: () => now });
      const admitted = await limiter.check(ask(400));
      expect(admitted.allowed).toBe(true);
      now = start + offset;
      const before = (await limiter.check(ask(0))).remaining;
      const settlement = await limiter.settle(admitted, 100);
      const after = (await limiter.check(ask(0))).remaining;
      const label = `${algorithm} settled ${offset} ms later`;
      expect({ label, outcome: settlement.outcome, givenBack: settlement.givenBack }).toEqual({
        label,
        outcome: 'settled',
        givenBack: expected[i],
      });
      expect({ label, given: after - before }).toEqual({ label, given: settlement.givenBack });
      expect(settlement.charged).toBe(0);
    }
  }
}

/** The case: two budgets, a settle after the fixed windows rolled over: nothing given back, 0 said. */
async function afterRollover(store: () => Store) {
  let now = T;
  const rules = compileRules({
    rules: [tokenRule('tpm', 'fixed_window'), tokenRule('tpm_again', 'fixed_window')],
  });
  const limiter = createLimiter({ rules, store: store(), clock: () => now });
  const admitted = await limiter.check(ask(1000));
  now = T + 50_000;
  expect(await limiter.settle(admitted, 400)).toEqual({ outcome: 'settled', charged: 0, givenBack: 0 });
  // Within the window the same settle gives back 600 per rule, summed.
  now = T + 50_000 + 1_000;
  const again = await limiter.check(ask(1000));
  expect(await limiter.settle(again, 400)).toEqual({ outcome: 'settled', charged: 0, givenBack: 1200 });
  const left = await limiter.check(ask(0));
  expect(left.remaining).toBe(600);
}

describe('settle answers what was really given back', () => {
  describe('MemoryStore', () => {
    it('givenBack equals the change of remaining, per algorithm and moment', () =>
      givenBackAgainstRemaining(() => new MemoryStore()));
    it('a settle after the window rolled over answers givenBack 0 (two rules)', () =>
      afterRollover(() => new MemoryStore()));
  });

  describe('a private Redis', () => {
    const redis = privateRedis();
    const store = () =>
      new RedisStore({
        client: redis.client,
        prefix: randomPrefix('given-back'),
        timeoutMs: 2_000,
        maxTimeoutMs: 2_000,
      });
    it(
      'givenBack equals the change of remaining, per algorithm and moment',
      () => givenBackAgainstRemaining(store),
      30_000,
    );
    it('a settle after the window rolled over answers givenBack 0 (two rules)', () => afterRollover(store));
  });
});

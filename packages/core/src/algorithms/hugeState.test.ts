/**
 * A stored count far past any limit (9008995388950584, past 2^53, as a Redis key was found holding), 1e300,
 * or a lease or log entry of such a cost: the algorithms deny, never admit beyond the limit, and the
 * RateLimit headers made from their answers carry exact integers (no `1e+21`, nothing past 15 digits).
 */
import { describe, expect, it } from 'vitest';
import { rateLimitHeaders, retryAfterSeconds } from '../fields/responses.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { AlgorithmName } from './index.js';
import { decideByName, descriptorOf } from './index.js';
import type { LimitParams, Outcome } from './limits.js';

const T = Date.UTC(2026, 10, 30, 12, 0); // a multiple of every window here
const W = 60_000;
const PAST_2_53 = 9_008_995_388_950_584;
const HUGE = [PAST_2_53, 2 ** 60, 1e300];
const params: LimitParams = { limit: 5, windowMs: W, burst: 5 };

/** States that hold `n` units taken in the current window (or a lease / log entry of that cost). */
const holding: Partial<Record<AlgorithmName, (n: number) => unknown>> = {
  fixed_window: (n) => ({ start: T, count: n }),
  quota: (n) => ({ start: Date.UTC(2026, 10, 30), count: n }),
  sliding_window: (n) => ({ window: T / W, prev: 0, curr: n }),
  sliding_log: (n) => ({ entries: [{ at: T, cost: n }] }),
  concurrency: (n) => ({ leases: [{ id: 'other', expiresAt: T + 1000, cost: n }] }),
};

const quotaParams: LimitParams = { limit: 5, windowMs: 0, burst: 5, period: 'day' } as LimitParams;

/** The RateLimit field of an outcome as an allowed or denied response shows it. */
function headerOf(outcome: Outcome<unknown>, algorithm: AlgorithmName): string {
  const result: RuleResult = {
    rule: 'r',
    mode: 'enforce',
    algorithm,
    windowMs: W,
    ...outcome,
  } as unknown as RuleResult;
  const decision = {
    allowed: outcome.allowed,
    rule: 'r',
    limit: outcome.limit,
    remaining: outcome.remaining,
    resetMs: outcome.resetMs,
    retryAfterMs: outcome.retryAfterMs,
    results: [result],
  } as unknown as Decision;
  return rateLimitHeaders(decision, 'draft').RateLimit ?? '';
}

describe('a huge or corrupt stored count', () => {
  for (const [name, stateOf] of Object.entries(holding) as [AlgorithmName, (n: number) => unknown][]) {
    it.each(HUGE)(`${name}: %d units held is read as its own state and denies`, (n) => {
      const state = stateOf(n);
      expect(descriptorOf(name).isState(state)).toBe(true);
      const p = name === 'quota' ? quotaParams : params;
      const outcome = decideByName(name, state, T + 10, p, 1, 'me');
      expect(outcome.allowed).toBe(false);
      expect(outcome.remaining).toBe(0);
      for (const value of [outcome.retryAfterMs, outcome.resetMs, outcome.ttlMs])
        expect(Number.isSafeInteger(value)).toBe(true);
      expect(headerOf(outcome, name)).toMatch(/^"r";r=0;t=[1-9]\d{0,14}$/);
    });
  }

  it('token_bucket and gcra: a huge stored room never lets more than the burst through', () => {
    for (const [name, state] of [
      ['token_bucket', { tokens: PAST_2_53, at: T }],
      ['token_bucket', { tokens: 1e300, at: T }],
      ['gcra', { tat: -PAST_2_53 }],
    ] as const) {
      let current: unknown = state;
      let admitted = 0;
      for (let i = 0; i < 20; i++) {
        const outcome = decideByName(name, current, T + 10, params, 1, `l${i}`);
        if (!outcome.allowed) break;
        admitted++;
        current = outcome.state;
        expect(Number.isSafeInteger(outcome.remaining)).toBe(true);
      }
      expect(admitted).toBe(params.burst);
    }
  });
});

describe('header numbers from whatever a store answers', () => {
  it('stay exact integers of at most 15 digits', () => {
    const decision = {
      allowed: false,
      rule: 'r',
      limit: 1e300,
      remaining: PAST_2_53 * 1000,
      resetMs: 1e300,
      retryAfterMs: 1e300,
      results: [],
    } as unknown as Decision;
    const headers = rateLimitHeaders(decision, 'both', undefined, () => T);
    expect(headers.RateLimit).toBe('"r";r=999999999999999;t=999999999999999');
    expect(headers['X-RateLimit-Remaining']).toBe('999999999999999');
    expect(retryAfterSeconds(decision)).toBe(999_999_999_999_999);
    expect(retryAfterSeconds(decision, 0.1, () => 0.5)).toBe(999_999_999_999_999);
    for (const value of Object.values(headers)) expect(value).not.toMatch(/e\+|\./);
  });
});

import { describe, expect, it } from 'vitest';
import { gcra } from './gcra.js';
import { leakyBucket, refundLeaky } from './leakyBucket.js';

const T = Date.UTC(2026, 10, 30, 8, 0);
const params = { limit: 10, windowMs: 1000, burst: 5 };

describe('leaky_bucket', () => {
  it('queues up to the burst with growing delays, then denies', () => {
    let state = leakyBucket.decide(undefined, T, params, 1).state;
    expect(leakyBucket.decide(undefined, T, params, 1).delayMs).toBe(0);
    for (const delayMs of [100, 200, 300, 400]) {
      const outcome = leakyBucket.decide(state, T, params, 1);
      expect(outcome).toMatchObject({ allowed: true, delayMs, resetMs: delayMs + 100 });
      state = outcome.state;
    }
    const denied = leakyBucket.decide(state, T, params, 1);
    expect(denied).toMatchObject({ allowed: false, retryAfterMs: 100, remaining: 0 });
    const after = leakyBucket.decide(state, T + 100, params, 1);
    expect(after).toMatchObject({ allowed: true, delayMs: 400 });
  });

  it('lets the queue drain: an idle bucket delays nothing', () => {
    const state = leakyBucket.decide(undefined, T, params, 3).state;
    expect(leakyBucket.decide(state, T + 150, params, 1).delayMs).toBe(150);
    expect(leakyBucket.decide(state, T + 300, params, 1).delayMs).toBe(0);
    expect(leakyBucket.decide(state, T, params, 6).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('refundLeaky', () => {
  const params = { limit: 2, windowMs: 1000, burst: 4 };
  const t = 1_780_000_000_000;

  it('shortens the queue by the refunded cost, never below empty', () => {
    let state = leakyBucket.decide(undefined, t, params, 3).state; // 3 queued: drains in 1500 ms
    expect(leakyBucket.decide(state, t, params, 1).delayMs).toBe(1500);
    const refunded = refundLeaky(state, t, params, 1);
    expect(refunded.ttlMs).toBe(1000);
    expect(leakyBucket.decide(refunded.state, t, params, 1).delayMs).toBe(1000);
    state = refundLeaky(refunded.state, t, params, 10).state;
    expect(leakyBucket.decide(state, t, params, 1).delayMs).toBe(0);
  });
});

describe('a rule with no rate', () => {
  it('stores no NaN for a zero cost on a zero limit', () => {
    const zero = { limit: 0, windowMs: 1000, burst: 0 };
    for (const algorithm of [gcra, leakyBucket]) {
      const first = algorithm.decide(undefined, 1000, zero, 0);
      expect(first.state).toEqual({ tat: 1000, sub: 0 });
      expect(Number.isNaN(algorithm.decide(first.state, 1001, zero, 0).remaining)).toBe(false);
    }
  });
});

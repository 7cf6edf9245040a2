import { describe, expect, it } from 'vitest';
import { leakyBucket } from './leakyBucket.js';

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

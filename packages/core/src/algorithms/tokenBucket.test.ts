import { describe, expect, it } from 'vitest';
import { gcra } from './gcra.js';
import type { AnyDescriptor } from './index.js';
import { tokenBucket } from './tokenBucket.js';

const T = Date.UTC(2026, 10, 30, 8, 0);

// Both algorithms must pass the very same expectations.
const both = [tokenBucket, gcra] as unknown as AnyDescriptor[];

describe.each(both)('$name', (algorithm) => {
  it('allows a burst, then one request per emission interval', () => {
    const params = { limit: 10, windowMs: 1000, burst: 20 };
    let state: unknown;
    for (let i = 1; i <= 20; i++) {
      const outcome = algorithm.decide(state, T, params, 1);
      expect(outcome).toMatchObject({ allowed: true, remaining: 20 - i, resetMs: i * 100 });
      state = outcome.state;
    }
    const denied = algorithm.decide(state, T, params, 1);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100, resetMs: 2000 });
    expect(denied.state).toBe(state);
    expect(algorithm.decide(state, T + 99, params, 1).allowed).toBe(false);
    expect(algorithm.decide(state, T + 100, params, 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect(algorithm.decide(state, T + 250, params, 3)).toMatchObject({ allowed: false, retryAfterMs: 50 });
  });

  it('does not drift when the interval is not a whole number of ms (3 per second)', () => {
    const params = { limit: 3, windowMs: 1000, burst: 1 };
    let state = algorithm.decide(undefined, T, params, 1).state;
    expect(algorithm.decide(state, T, params, 1).retryAfterMs).toBe(334); // ceil(333.33...)
    state = algorithm.decide(state, T + 334, params, 1).state;
    // The next one is due at T + 334 + 333.33... = T + 667.33...
    expect(algorithm.decide(state, T + 667, params, 1)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(algorithm.decide(state, T + 668, params, 1).allowed).toBe(true);
  });

  it('refills to capacity after a long idle time and never beyond', () => {
    const params = { limit: 100, windowMs: 1000, burst: 5 };
    const state = algorithm.decide(undefined, T, params, 5).state;
    expect(algorithm.decide(state, T + 10 * 365 * 86_400_000, params, 5)).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    expect(algorithm.decide(state, T + 86_400_000, params, 6).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('gcra', () => {
  it('stays exact with a large limit at today’s epoch times', () => {
    const params = { limit: 1_000_003, windowMs: 60_000, burst: 1_000_003 };
    const first = gcra.decide(undefined, T, params, 1_000_003);
    expect(first).toMatchObject({ allowed: true, remaining: 0 });
    expect(gcra.decide(first.state, T, params, 1).retryAfterMs).toBe(1);
    expect(gcra.decide(first.state, T + 60_000, params, 1_000_003).allowed).toBe(true);
    expect(gcra.decide(first.state, T + 59_999, params, 1_000_003).allowed).toBe(false);
  });
});

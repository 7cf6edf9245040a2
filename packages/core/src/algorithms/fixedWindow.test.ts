import { describe, expect, it } from 'vitest';
import { type FixedWindowState, fixedWindow } from './fixedWindow.js';

const MINUTE = Date.UTC(2026, 10, 30, 12, 0); // a window start: multiple of 60 s
const params = { limit: 3, windowMs: 60_000, burst: 3 };

function run(state: FixedWindowState | undefined, at: number, cost = 1) {
  return fixedWindow.decide(state, at, params, cost);
}

describe('fixed_window', () => {
  it('counts to the limit, then denies until the window ends', () => {
    let state: FixedWindowState | undefined;
    for (const remaining of [2, 1, 0]) {
      const outcome = run(state, MINUTE + 10_000);
      expect(outcome).toMatchObject({ allowed: true, remaining, resetMs: 50_000, ttlMs: 50_000 });
      state = outcome.state;
    }
    const denied = run(state, MINUTE + 10_000);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 50_000, resetMs: 50_000 });
    expect(denied.state).toBe(state);
    expect(run(state, MINUTE + 59_999).allowed).toBe(false);
    expect(run(state, MINUTE + 60_000)).toMatchObject({ allowed: true, remaining: 2, resetMs: 60_000 });
  });

  it('charges the cost and denies what never fits without a retry time', () => {
    const outcome = run(undefined, MINUTE, 2);
    expect(outcome).toMatchObject({ allowed: true, remaining: 1 });
    expect(run(outcome.state, MINUTE + 1, 2)).toMatchObject({
      allowed: false,
      remaining: 1,
      retryAfterMs: 59_999,
    });
    expect(run(outcome.state, MINUTE + 1, 4).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });
});

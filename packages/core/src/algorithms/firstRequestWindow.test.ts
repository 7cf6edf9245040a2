import { describe, expect, it } from 'vitest';
import { type FirstRequestWindowState, firstRequestWindow } from './firstRequestWindow.js';
import { fixedWindow } from './fixedWindow.js';

const MINUTE = Date.UTC(2026, 10, 30, 12, 0); // a clock window start: multiple of 60 s
const params = { limit: 3, windowMs: 60_000, burst: 3 };

function run(state: FirstRequestWindowState | undefined, at: number, cost = 1) {
  return firstRequestWindow.decide(state, at, params, cost);
}

describe('first_request_window', () => {
  it('opens the window at the first request: a full window of wait after the first denial', () => {
    let state: FirstRequestWindowState | undefined;
    for (const remaining of [2, 1, 0]) {
      const outcome = run(state, MINUTE + 50_000);
      expect(outcome).toMatchObject({ allowed: true, remaining, resetMs: 60_000, ttlMs: 60_000 });
      state = outcome.state;
    }
    expect(state).toEqual({ start: MINUTE + 50_000, count: 3 });
    expect(run(state, MINUTE + 50_000)).toMatchObject({ allowed: false, retryAfterMs: 60_000 });
    // fixed_window, on the clock's minute, would have reset 10 s after the first request.
    expect(fixedWindow.decide(undefined, MINUTE + 50_000, params, 1).resetMs).toBe(10_000);
    expect(run(state, MINUTE + 109_999).allowed).toBe(false);
    expect(run(state, MINUTE + 110_000)).toMatchObject({ allowed: true, remaining: 2, resetMs: 60_000 });
    expect(run(state, MINUTE + 110_000).state).toEqual({ start: MINUTE + 110_000, count: 1 });
  });

  it('refunds only into the window the charge was counted in', () => {
    const { refund } = firstRequestWindow as typeof firstRequestWindow & { release: 'refund' };
    const state = { start: MINUTE + 5_000, count: 2 };
    const charge = (at: number) => ({ at, cost: 1 });
    expect(refund(state, MINUTE + 6_000, params, charge(MINUTE + 5_500))).toEqual({
      state: { start: MINUTE + 5_000, count: 1 },
      ttlMs: 59_000,
    });
    expect(refund(state, MINUTE + 6_000, params, charge(MINUTE + 4_999))).toBeUndefined();
    expect(refund(state, MINUTE + 66_000, params, charge(MINUTE + 5_500))).toBeUndefined();
    expect(refund(state, MINUTE, params, { cost: 1 })).toBeUndefined();
  });

  it('reads a corrupt start as no window', () => {
    expect(run({ start: MINUTE + 0.5, count: 3 }, MINUTE + 1)).toMatchObject({ allowed: true, remaining: 2 });
    expect(run({ start: Number.NaN, count: 3 }, MINUTE)).toMatchObject({ allowed: true, remaining: 2 });
  });
});

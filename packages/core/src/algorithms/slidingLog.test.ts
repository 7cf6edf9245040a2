import { describe, expect, it } from 'vitest';
import { type SlidingLogState, slidingLog } from './slidingLog.js';

const T = Date.UTC(2026, 10, 30, 8, 0);
const HOUR = 3_600_000;
const params = { limit: 5, windowMs: HOUR, burst: 5 };

describe('sliding_log', () => {
  it('allows five logins an hour and retries when the oldest leaves the window', () => {
    let state: SlidingLogState | undefined;
    const times = [0, 60_000, 120_000, 180_000, 240_000].map((d) => T + d);
    times.forEach((at, i) => {
      const outcome = slidingLog.decide(state, at, params, 1);
      expect(outcome).toMatchObject({ allowed: true, remaining: 4 - i });
      state = outcome.state;
    });
    const denied = slidingLog.decide(state, T + 300_000, params, 1);
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: HOUR - 300_000 });
    expect(denied.resetMs).toBe(240_000 + HOUR - 300_000);
    expect(slidingLog.decide(state, T + HOUR - 1, params, 1).allowed).toBe(false);
    const later = slidingLog.decide(state, T + HOUR, params, 1);
    expect(later).toMatchObject({ allowed: true, remaining: 0 });
    expect(later.state.entries).toHaveLength(5);
  });

  it('waits for as many old entries as the cost needs', () => {
    let state = slidingLog.decide(undefined, T, params, 2).state;
    state = slidingLog.decide(state, T + 10, params, 2).state;
    state = slidingLog.decide(state, T + 20, params, 1).state;
    // 5 used; a cost of 3 needs the entries of T and T + 10 gone.
    expect(slidingLog.decide(state, T + 30, params, 3).retryAfterMs).toBe(HOUR + 10 - 30);
    expect(slidingLog.decide(state, T + 30, params, 6).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('merges requests of the same millisecond and prunes old ones', () => {
    let state = slidingLog.decide(undefined, T, params, 1).state;
    state = slidingLog.decide(state, T, params, 1).state;
    expect(state.entries).toEqual([{ at: T, cost: 2 }]);
    state = slidingLog.decide(state, T + HOUR, params, 1).state;
    expect(state.entries).toEqual([{ at: T + HOUR, cost: 1 }]);
  });
});

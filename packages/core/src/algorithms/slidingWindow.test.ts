import { describe, expect, it } from 'vitest';
import { type SlidingWindowState, slidingWindow } from './slidingWindow.js';

const W = 60_000;
const START = Date.UTC(2026, 10, 30, 12, 0); // a window start
const w = START / W;
const seed = { limit: 600, windowMs: W, burst: 600 };

describe('sliding_window', () => {
  it("holds the seed's trace: 480 before, 230 now, 15 s in: 10 more pass, the 11th is denied", () => {
    let state: SlidingWindowState = { window: w, prev: 480, curr: 230 };
    const at = START + 15_000;
    for (let i = 1; i <= 10; i++) {
      const outcome = slidingWindow.decide(state, at, seed, 1);
      expect(outcome).toMatchObject({ allowed: true, remaining: 10 - i, retryAfterMs: 0 });
      state = outcome.state;
    }
    const denied = slidingWindow.decide(state, at, seed, 1);
    // 480 * (1 - e/60000) + 240 + 1 <= 600  <=>  e >= 15125
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 125, resetMs: 105_000 });
    expect(denied.state).toBe(state);
    expect(slidingWindow.decide(state, at + 124, seed, 1).allowed).toBe(false);
    expect(slidingWindow.decide(state, at + 125, seed, 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('builds the seed state from requests and rolls the window over', () => {
    const first = slidingWindow.decide(undefined, START - W + 5_000, seed, 480);
    expect(first).toMatchObject({
      allowed: true,
      remaining: 120,
      resetMs: 2 * W - 5_000,
      ttlMs: 2 * W - 5_000,
    });
    const second = slidingWindow.decide(first.state, START + 15_000, seed, 230);
    expect(second).toMatchObject({ allowed: true, remaining: 10 });
    expect(second.state).toEqual({ window: w, prev: 480, curr: 230 });
  });

  it('answers in the next window when the current one alone is full', () => {
    const full: SlidingWindowState = { window: w, prev: 0, curr: 600 };
    // Next window: 600 * (1 - e/60000) + 1 <= 600  <=>  e >= 100.
    const denied = slidingWindow.decide(full, START + 20_000, seed, 1);
    expect(denied.retryAfterMs).toBe(40_000 + 100);
    expect(slidingWindow.decide(full, START + W + 99, seed, 1).allowed).toBe(false);
    expect(slidingWindow.decide(full, START + W + 100, seed, 1).allowed).toBe(true);
  });

  it('answers in the window after next when the request needs the whole limit', () => {
    const params = { limit: 10, windowMs: W, burst: 10 };
    const state: SlidingWindowState = { window: w, prev: 0, curr: 10 };
    expect(slidingWindow.decide(state, START + 1, params, 10).retryAfterMs).toBe(2 * W - 1);
  });

  it('handles a count above the limit (the limit was lowered)', () => {
    const state: SlidingWindowState = { window: w, prev: 0, curr: 700 };
    // 700 * (60000 - e) <= 599 * 60000  <=>  e >= 8657.14..., so 8658 ms into the next window.
    expect(slidingWindow.decide(state, START, seed, 1).retryAfterMs).toBe(W + 8_658);
  });

  it('denies a cost above the limit with no retry time', () => {
    expect(slidingWindow.decide(undefined, START, seed, 601)).toMatchObject({
      allowed: false,
      remaining: 600,
      retryAfterMs: Number.POSITIVE_INFINITY,
    });
  });
});

import { describe, expect, it } from 'vitest';
import {
  jitteredRetryDelay,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  recommendedRedisOptions,
  reconnectOnReadonly,
} from './clientOptions.js';

/** The backoff ceiling of attempt n: 50, 100, 200 ... ms, at most 800 ms. */
const ceiling = (n: number) => Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (n - 1));

describe('recommendedRedisOptions.retryStrategy', () => {
  it('spreads the delays of gateways reconnecting together: they differ, within the upper half of the backoff', () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      const delays = Array.from({ length: 200 }, () => recommendedRedisOptions.retryStrategy(attempt));
      for (const delay of delays) {
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(ceiling(attempt) / 2);
        expect(delay).toBeLessThanOrEqual(ceiling(attempt));
      }
      // 200 gateways on the same attempt are not in lockstep: of the ceiling/2 + 1 possible delays, far
      // more than half show up (fewer would take odds below 1e-9).
      expect(new Set(delays).size).toBeGreaterThan(Math.min(50, (ceiling(attempt) / 2 + 1) / 2));
    }
  });

  it('has exact bounds: the bottom and top of each attempt, capped at 800 ms, for odd attempt numbers too', () => {
    expect([1, 2, 3, 6, 7, 100].map((n) => jitteredRetryDelay(n, () => 0))).toEqual([
      25, 50, 100, 400, 400, 400,
    ]);
    expect([1, 2, 3, 6, 7, 100].map((n) => jitteredRetryDelay(n, () => 1))).toEqual([
      50, 100, 200, 800, 800, 800,
    ]);
    expect([0, -3, Number.NaN].map((n) => jitteredRetryDelay(n, () => 1))).toEqual([50, 50, 50]);
  });
});

describe('recommendedRedisOptions.reconnectOnError', () => {
  it('reconnects, without resending, on READONLY only', () => {
    const readonly = new Error("READONLY You can't write against a read only replica.");
    expect(recommendedRedisOptions.reconnectOnError(readonly)).toBe(1);
    expect(reconnectOnReadonly(new Error('WRONGTYPE Operation against a key'))).toBe(false);
    expect(reconnectOnReadonly(new Error('ERR something READONLY'))).toBe(false);
  });
});

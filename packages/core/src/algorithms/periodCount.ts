import type { Outcome } from '../types.js';

/** A counter for one period (a fixed window or a calendar period): `count` units since `start` (epoch ms). */
export interface PeriodCountState {
  readonly start: number;
  readonly count: number;
}

/**
 * The decision shared by fixed_window and quota: count units in the period [start, end) that holds `now`.
 * A count from an earlier period reads as 0. Denied requests change nothing; the retry time is the period's
 * end, where the count restarts at 0 (a cost above the limit never fits).
 */
export function countInPeriod(
  state: PeriodCountState | undefined,
  now: number,
  start: number,
  end: number,
  limit: number,
  cost: number,
): Outcome<PeriodCountState> {
  const count = state !== undefined && state.start === start ? state.count : 0;
  const resetMs = end - now;
  const fits = cost <= limit;
  if (!fits || count + cost > limit) {
    return {
      allowed: false,
      state: state ?? { start, count: 0 },
      limit,
      remaining: Math.max(0, limit - count),
      resetMs,
      retryAfterMs: fits ? resetMs : Number.POSITIVE_INFINITY,
      ttlMs: resetMs,
    };
  }
  const next = count + cost;
  return {
    allowed: true,
    state: { start, count: next },
    limit,
    remaining: Math.max(0, limit - next),
    resetMs,
    retryAfterMs: 0,
    ttlMs: resetMs,
  };
}

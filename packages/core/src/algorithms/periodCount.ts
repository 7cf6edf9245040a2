import { hasNumbers } from './descriptor.js';
import type { Outcome } from './limits.js';
import { storedCount } from './stored.js';

/** A counter for one period (a fixed window or a calendar period): `count` units since `start` (epoch ms). */
export interface PeriodCountState {
  readonly start: number;
  readonly count: number;
}

/** Whether a stored value is a period count (fixed_window and quota state). */
export function isPeriodCountState(value: unknown): value is PeriodCountState {
  return hasNumbers(value, 'start', 'count');
}

/**
 * Whether `state` counts the period right after [start, end): the clock stepped back by less than a period
 * since it was written. Such a count still holds (forgetting it would let the period be spent twice), so the
 * caller decides as at the start of the state's period. A state further ahead, or whose start is not a whole
 * ms, is stale or corrupt.
 */
export function isNextPeriod(
  state: PeriodCountState | undefined,
  start: number,
  end: number,
): state is PeriodCountState {
  return state !== undefined && Number.isInteger(state.start) && state.start > start && state.start <= end;
}

/**
 * The decision shared by fixed_window and quota: count units in the period [start, end) that holds `now`.
 * A count from another period reads as 0. Denied requests change nothing; the retry time is the period's
 * end, where the count restarts at 0 (a cost above the limit never fits). `lead` is how far `now` lies
 * ahead of the clock (see isNextPeriod; 0 otherwise): the state is kept that much longer.
 */
export function countInPeriod(
  state: PeriodCountState | undefined,
  now: number,
  start: number,
  end: number,
  limit: number,
  cost: number,
  lead: number,
): Outcome<PeriodCountState> {
  const count = state !== undefined && state.start === start ? storedCount(state.count) : 0;
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
      ttlMs: resetMs + lead,
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
    ttlMs: resetMs + lead,
  };
}

/**
 * Gives `cost` units back to the count of period [start, end) (fixed_window and quota): only while the
 * counter still counts that period and `now` lies before its end. A refund never reaches into another
 * period and never takes the count below 0; undefined when there is nothing to give back.
 */
export function refundInPeriod(
  state: PeriodCountState,
  now: number,
  start: number,
  end: number,
  cost: number,
): { state: PeriodCountState; ttlMs: number } | undefined {
  const t = Math.floor(now);
  const count = storedCount(state.count);
  if (state.start !== start || t >= end || count <= 0) return undefined;
  return { state: { start, count: Math.max(0, count - cost) }, ttlMs: end - t };
}

import type { Charge } from './charge.js';
import { type AlgorithmDescriptor, hasNumbers } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';

/** sliding_window state: the counts of epoch-aligned window `window` (curr) and of the one before (prev). */
export interface SlidingWindowState {
  /** Window index: floor(now / windowMs). */
  readonly window: number;
  readonly prev: number;
  readonly curr: number;
}

/**
 * The state as read at window index `w`: undefined unless its window index is whole and at most one window
 * ahead (a clock that stepped back by less than a window) and its counts are finite. A state further
 * ahead is stale or corrupt, and reads as none.
 */
function usable(state: SlidingWindowState | undefined, w: number): SlidingWindowState | undefined {
  if (state === undefined || !Number.isInteger(state.window) || state.window > w + 1) return undefined;
  return Number.isFinite(state.prev) && Number.isFinite(state.curr) ? state : undefined;
}

/** The previous window's count as seen from window index `w` (a state from an older window has rolled over). */
function prevAt(state: SlidingWindowState | undefined, w: number): number {
  if (state === undefined || state.window < w - 1) return 0;
  return Math.max(0, state.window === w - 1 ? state.curr : state.prev);
}

/** The current window's count as seen from window index `w`. Two functions, not one pair: no object per call. */
function currAt(state: SlidingWindowState | undefined, w: number): number {
  return state === undefined || state.window < w ? 0 : Math.max(0, state.curr);
}

/** floor(limit - estimate) once the current window holds `curr`, never negative. */
function remainingAfter(limit: number, size: number, prev: number, elapsed: number, curr: number): number {
  return Math.max(0, Math.floor((limit * size - prev * (size - elapsed) - curr * size) / size));
}

/**
 * `prev * (1 - elapsed / W) + curr + cost <= limit`, multiplied through by W so that it is exact integer
 * arithmetic (exact while limit * windowMs < 2^53).
 */
function fits(prev: number, curr: number, elapsed: number, p: LimitParams, cost: number): boolean {
  const w = p.windowMs;
  return prev * (w - elapsed) + (curr + cost) * w <= p.limit * w;
}

/** Whether the request fits at time `t`, with no other request in between. */
function fitsAt(state: SlidingWindowState | undefined, t: number, p: LimitParams, cost: number): boolean {
  const w = Math.floor(t / p.windowMs);
  return fits(prevAt(state, w), currAt(state, w), t - w * p.windowMs, p, cost);
}

/**
 * The earliest time > now at which the request fits, for cost <= limit. The estimate never grows while no
 * request arrives, so the answer is the first point where the formula solves: later in this window when the
 * current count leaves room (prev's weight falling), else in the next window (curr becomes prev), at its
 * end at the latest. The candidate is checked with the same predicate and moved by a millisecond if
 * floating point rounding disagrees.
 */
function earliestFit(
  state: SlidingWindowState | undefined,
  now: number,
  p: LimitParams,
  cost: number,
): number {
  const size = p.windowMs;
  const w = Math.floor(now / size);
  const prev = prevAt(state, w);
  const curr = currAt(state, w);
  let candidate: number;
  const room = p.limit - curr - cost;
  const inThisWindow = room >= 0 && prev > 0 ? size - Math.floor((room * size) / prev) : size;
  if (inThisWindow < size) {
    candidate = w * size + inThisWindow;
  } else {
    const nextRoom = p.limit - cost;
    const inNextWindow = curr > 0 ? Math.max(0, size - Math.floor((nextRoom * size) / curr)) : 0;
    candidate = (w + 1) * size + Math.min(size, inNextWindow);
  }
  candidate = Math.max(candidate, now + 1);
  while (!fitsAt(state, candidate, p, cost)) candidate += 1;
  while (candidate - 1 > now && fitsAt(state, candidate - 1, p, cost)) candidate -= 1;
  return candidate;
}

/**
 * Gives a charge back to the current count, only while the charge's window is still the current one (for the
 * clock and the counter): once it has rolled over the charge weighs as the previous window's, and is kept.
 */
function refundInWindow(
  state: SlidingWindowState,
  now: number,
  params: LimitParams,
  charge: Charge,
): { state: SlidingWindowState; ttlMs: number } | undefined {
  if (charge.at === undefined) return undefined;
  const size = params.windowMs;
  const t = Math.floor(now);
  const w = Math.floor(Math.floor(charge.at) / size);
  const read = usable(state, w);
  if (read === undefined || read.window !== w || Math.floor(t / size) !== w) return undefined;
  const prev = prevAt(read, w);
  const curr = currAt(read, w);
  if (curr <= 0) return undefined;
  const next = Math.max(0, curr - charge.cost);
  return { state: { window: w, prev, curr: next }, ttlMs: msUntilEmpty(prev, next, w, t, size) };
}

/** Time until the estimate is back to 0: the end of the next window while curr > 0. */
function msUntilEmpty(prev: number, curr: number, w: number, now: number, size: number): number {
  if (curr > 0) return (w + 2) * size - now;
  if (prev > 0) return (w + 1) * size - now;
  return 0;
}

/**
 * sliding_window: two counters per key and the seed's estimate
 * `prev * (1 - elapsed / windowMs) + curr`; allowed when `estimate + cost <= limit`.
 * `remaining` is floor(limit - estimate) after the request. A state one window ahead (the clock stepped
 * back by less than a window) counts in full: the request is decided as at the start of that window.
 */
export const slidingWindow: AlgorithmDescriptor<'sliding_window', SlidingWindowState> = {
  name: 'sliding_window',
  limit: 'requests',
  burst: false,
  calendar: false,
  leasable: true,
  release: 'refund',
  refund: refundInWindow,
  isState: (value): value is SlidingWindowState => hasNumbers(value, 'window', 'prev', 'curr'),
  decide(state, now, params, cost) {
    const clock = Math.floor(now);
    const size = params.windowMs;
    const read = usable(state, Math.floor(clock / size));
    const t = read !== undefined && read.window * size > clock ? read.window * size : clock;
    const w = Math.floor(t / size);
    const elapsed = t - w * size;
    const prev = prevAt(read, w);
    const curr = currAt(read, w);
    if (cost > params.limit || !fits(prev, curr, elapsed, params, cost)) {
      const resetMs = msUntilEmpty(prev, curr, w, t, size);
      const outcome: Outcome<SlidingWindowState> = {
        allowed: false,
        state: state ?? { window: w, prev: 0, curr: 0 },
        limit: params.limit,
        remaining: remainingAfter(params.limit, size, prev, elapsed, curr),
        resetMs,
        retryAfterMs: cost > params.limit ? Number.POSITIVE_INFINITY : earliestFit(read, t, params, cost) - t,
        ttlMs: resetMs + t - clock,
      };
      return outcome;
    }
    const next = curr + cost;
    const resetMs = msUntilEmpty(prev, next, w, t, size);
    return {
      allowed: true,
      state: { window: w, prev, curr: next },
      limit: params.limit,
      remaining: remainingAfter(params.limit, size, prev, elapsed, next),
      resetMs,
      retryAfterMs: 0,
      ttlMs: resetMs + t - clock,
    };
  },
};

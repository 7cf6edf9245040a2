import type { AlgorithmDescriptor } from './descriptor.js';
import { countInPeriod, isPeriodCountState, type PeriodCountState, refundInPeriod } from './periodCount.js';

/** fixed_window state: units counted in the window that starts at `start` (a multiple of windowMs). */
export type FixedWindowState = PeriodCountState;

/**
 * fixed_window: one counter per epoch-aligned window `[k * windowMs, (k + 1) * windowMs)`; allowed while
 * `count + cost <= limit`. Cheap and coarse: up to twice the limit can pass around a window boundary.
 * After a clock step back of less than a window, the count of the window ahead still holds (decided as at
 * that window's start); a state further ahead is stale or corrupt and reads as empty.
 */
export const fixedWindow: AlgorithmDescriptor<'fixed_window', FixedWindowState> = {
  name: 'fixed_window',
  limit: 'requests',
  burst: false,
  calendar: false,
  leasable: true,
  release: 'refund',
  // Only into the window the charge was counted in.
  refund(state, now, params, charge) {
    if (charge.at === undefined) return undefined;
    const start = Math.floor(Math.floor(charge.at) / params.windowMs) * params.windowMs;
    return refundInPeriod(state, now, start, start + params.windowMs, charge.cost);
  },
  isState: isPeriodCountState,
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const size = params.windowMs;
    let start = Math.floor(t / size) * size;
    let at = t;
    // periodCount's isNextPeriod written out: as a call it doubled this function's time (micro-benchmark).
    if (
      state !== undefined &&
      state.start > start &&
      state.start <= start + size &&
      Number.isInteger(state.start)
    ) {
      at = state.start;
      start = Math.floor(at / size) * size;
    }
    return countInPeriod(state, at, start, start + size, params.limit, cost, at - t);
  },
};

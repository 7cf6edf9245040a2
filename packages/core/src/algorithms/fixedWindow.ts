import type { Algorithm } from '../types.js';
import { countInPeriod, type PeriodCountState } from './periodCount.js';

/** fixed_window state: units counted in the window that starts at `start` (a multiple of windowMs). */
export type FixedWindowState = PeriodCountState;

/**
 * fixed_window: one counter per epoch-aligned window `[k * windowMs, (k + 1) * windowMs)`; allowed while
 * `count + cost <= limit`. Cheap and coarse: up to twice the limit can pass around a window boundary.
 */
export const fixedWindow: Algorithm<FixedWindowState> = {
  name: 'fixed_window',
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const start = Math.floor(t / params.windowMs) * params.windowMs;
    return countInPeriod(state, t, start, start + params.windowMs, params.limit, cost);
  },
};

import type { AlgorithmDescriptor } from './descriptor.js';
import { countInPeriod, isPeriodCountState, type PeriodCountState, refundInPeriod } from './periodCount.js';

/** first_request_window state: units counted in the window that a client's first request opened at `start`. */
export type FirstRequestWindowState = PeriodCountState;

/**
 * first_request_window: a fixed window per key that starts at the key's first request, not on the clock's
 * window boundaries: `[start, start + windowMs)`, a new one opened by the first request after it ends. This is
 * how express-rate-limit, @fastify/rate-limit, koa-ratelimit, rate-limiter-flexible, @nestjs/throttler and
 * hono-rate-limiter count, for users who need their behaviour exactly (a full window's Retry-After after the
 * first denial). The state and the decision cost what fixed_window's do (two numbers, one comparison more);
 * like it, up to twice the limit can pass around a window's end.
 * A state ahead of the clock by at most a window (the clock stepped back) still holds, decided as at its start.
 */
export const firstRequestWindow: AlgorithmDescriptor<'first_request_window', FirstRequestWindowState> = {
  name: 'first_request_window',
  limit: 'requests',
  burst: false,
  calendar: false,
  leasable: true,
  release: 'refund',
  // Only into the window the charge was counted in: the state's, when the charge fell inside it.
  refund(state, now, params, charge) {
    if (charge.at === undefined || !Number.isInteger(state.start)) return undefined;
    const at = Math.floor(charge.at);
    const end = state.start + params.windowMs;
    if (at < state.start || at >= end) return undefined;
    return refundInPeriod(state, now, state.start, end, charge.cost);
  },
  isState: isPeriodCountState,
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const size = params.windowMs;
    let start = t;
    let at = t;
    if (state !== undefined && Number.isInteger(state.start)) {
      if (state.start <= t && t < state.start + size) start = state.start;
      else if (state.start > t && state.start <= t + size) {
        start = state.start;
        at = state.start;
      }
    }
    return countInPeriod(state, at, start, start + size, params.limit, cost, at - t);
  },
};

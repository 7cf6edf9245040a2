import type { Algorithm, AlgorithmName, LimitParams, Outcome } from '../types.js';
import { type ConcurrencyParams, type ConcurrencyState, concurrency } from './concurrency.js';
import { type FixedWindowState, fixedWindow } from './fixedWindow.js';
import { type GcraState, gcra } from './gcra.js';
import { type LeakyBucketState, leakyBucket } from './leakyBucket.js';
import { type QuotaState, quota } from './quota.js';
import { type SlidingLogState, slidingLog } from './slidingLog.js';
import { type SlidingWindowState, slidingWindow } from './slidingWindow.js';
import { type TokenBucketState, tokenBucket } from './tokenBucket.js';

export {
  type ConcurrencyLease,
  type ConcurrencyParams,
  type ConcurrencyState,
  concurrency,
  releaseLease,
} from './concurrency.js';
export { type FixedWindowState, fixedWindow } from './fixedWindow.js';
export { type GcraState, gcra } from './gcra.js';
export { type LeakyBucketState, leakyBucket, refundLeaky } from './leakyBucket.js';
export type { PeriodCountState } from './periodCount.js';
export { calendarPeriod, civilFromDays, daysFromCivil, type QuotaState, quota } from './quota.js';
export { type LogEntry, type SlidingLogState, slidingLog } from './slidingLog.js';
export { type SlidingWindowState, slidingWindow } from './slidingWindow.js';
export { type TokenBucketState, tokenBucket } from './tokenBucket.js';

/** The state each algorithm keeps per key. */
export interface AlgorithmStates {
  fixed_window: FixedWindowState;
  sliding_window: SlidingWindowState;
  sliding_log: SlidingLogState;
  token_bucket: TokenBucketState;
  gcra: GcraState;
  leaky_bucket: LeakyBucketState;
  concurrency: ConcurrencyState;
  quota: QuotaState;
}

/** The params each algorithm takes: LimitParams, plus the lease id for concurrency. */
export interface AlgorithmParams {
  fixed_window: LimitParams;
  sliding_window: LimitParams;
  sliding_log: LimitParams;
  token_bucket: LimitParams;
  gcra: LimitParams;
  leaky_bucket: LimitParams;
  concurrency: ConcurrencyParams;
  quota: LimitParams;
}

/** Every algorithm by name, each typed with its own state and params. */
export type AlgorithmRegistry = {
  readonly [K in AlgorithmName]: Algorithm<AlgorithmStates[K], AlgorithmParams[K]>;
};

/** The algorithms by name. */
export const algorithms: AlgorithmRegistry = {
  fixed_window: fixedWindow,
  sliding_window: slidingWindow,
  sliding_log: slidingLog,
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  concurrency,
  quota,
};

/**
 * Runs algorithm `name` on a state kept opaquely by a store. `state` must be undefined or a state this
 * same algorithm returned (stores key counters by rule, and a rule's algorithm is part of its identity).
 * `leaseId` is used by concurrency only.
 */
export function decideByName(
  name: AlgorithmName,
  state: unknown,
  now: number,
  params: LimitParams,
  cost: number,
  leaseId = '',
): Outcome<unknown> {
  if (name === 'concurrency') {
    return concurrency.decide(state as ConcurrencyState | undefined, now, { ...params, leaseId }, cost);
  }
  const algorithm = algorithms[name] as Algorithm<unknown>;
  return algorithm.decide(state, now, params, cost);
}

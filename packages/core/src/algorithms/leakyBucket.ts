import type { AlgorithmDescriptor } from './descriptor.js';
import {
  debtAt,
  type GcraState,
  isGcraState,
  msFor,
  refundDebt,
  stateWithDebt,
  toleranceUnits,
} from './gcra.js';
import type { LimitParams, Outcome } from './limits.js';

/** leaky_bucket state: when the queue drains, as in gcra (`tat + sub / limit` ms). */
export type LeakyBucketState = GcraState;

/**
 * leaky_bucket: requests leave at `limit` per windowMs; a request joins the queue and must wait `delayMs`
 * (until the work queued before it has left) when the queue, itself included, holds at most `burst`
 * units; beyond that it is denied. An empty bucket gives delayMs 0.
 */
export const leakyBucket: AlgorithmDescriptor<'leaky_bucket', LeakyBucketState> = {
  name: 'leaky_bucket',
  lua: 'lb',
  limit: 'requests',
  burst: true,
  calendar: false,
  // Its queued places are not units to batch: a request waits for its own.
  leasable: false,
  // A place never served (the client left while it waited), or a charge the rule's `count` does not keep.
  release: 'refund',
  refund: refundDebt,
  refundLua: 'lr',
  isState: isGcraState,
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const capacity = toleranceUnits(params);
    const queued = debtAt(state, t, params);
    const added = cost * params.windowMs;
    if (added > capacity || queued + added > capacity) {
      const resetMs = msFor(queued, params);
      const outcome: Outcome<LeakyBucketState> = {
        allowed: false,
        state: state ?? { tat: t, sub: 0 },
        limit: params.limit,
        remaining: Math.floor((capacity - queued) / params.windowMs),
        resetMs,
        retryAfterMs: added > capacity ? Number.POSITIVE_INFINITY : msFor(queued + added - capacity, params),
        delayMs: 0,
        ttlMs: resetMs,
      };
      return outcome;
    }
    const next = queued + added;
    const resetMs = msFor(next, params);
    return {
      allowed: true,
      state: stateWithDebt(t, next, params),
      limit: params.limit,
      remaining: Math.floor((capacity - next) / params.windowMs),
      resetMs,
      retryAfterMs: 0,
      delayMs: msFor(queued, params),
      ttlMs: resetMs,
    };
  },
};

/**
 * Gives `cost` units back to the queue: a request that was allowed with a delay but given up before it was
 * served (the client left). Requests queued behind it keep their delays; the bucket has room sooner.
 */
export function refundLeaky(
  state: LeakyBucketState | undefined,
  now: number,
  params: LimitParams,
  cost: number,
): { state: LeakyBucketState; ttlMs: number } {
  const t = Math.floor(now);
  const owed = Math.max(0, debtAt(state, t, params) - cost * params.windowMs);
  return { state: stateWithDebt(t, owed, params), ttlMs: msFor(owed, params) };
}

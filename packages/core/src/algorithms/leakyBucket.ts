import { type DebtState, debtAt, isDebtState, msFor, refundDebt, spendDebt, stateWithDebt } from './debt.js';
import type { AlgorithmDescriptor } from './descriptor.js';
import type { LimitParams } from './limits.js';

/** leaky_bucket state: when the queue drains, as in gcra (the TAT debt.ts keeps). */
export type LeakyBucketState = DebtState;

/**
 * leaky_bucket: requests leave at `limit` per windowMs; a request joins the queue and must wait `delayMs`
 * (until the work queued before it has left) when the queue, itself included, holds at most `burst`
 * units; beyond that it is denied. An empty bucket gives delayMs 0.
 */
export const leakyBucket: AlgorithmDescriptor<'leaky_bucket', LeakyBucketState> = {
  name: 'leaky_bucket',
  limit: 'requests',
  burst: true,
  calendar: false,
  // Its queued places are not units to batch: a request waits for its own.
  leasable: false,
  // A place never served (the client left while it waited), or a charge the rule's `count` does not keep.
  release: 'refund',
  refund: refundDebt,
  isState: isDebtState,
  // The same arithmetic as gcra, the debt read as the queue: an allowed request waits behind what is queued.
  decide: (state, now, params, cost) => spendDebt(state, now, params, cost, true),
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

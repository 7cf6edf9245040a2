import type { LimitParams } from './limits.js';

/**
 * A charge to give back (counting by outcome, a queue place never served): its units, and when it was made,
 * so that a refund never reaches past the window the charge was counted in.
 */
export interface Charge {
  readonly cost: number;
  /** Epoch ms of the check that charged. Absent for a leaky_bucket place: it is still queued, all of it. */
  readonly at?: number;
  /** The resetMs the store answered for that check: by `at + resetMs` a bucket's charge has drained. */
  readonly resetMs?: number;
}

/**
 * The part of a bucket's charge (gcra, token_bucket, leaky_bucket, in units of 1/windowMs) still owed at `now`.
 * A charge's units drain after those owed before it, by `at + resetMs`; what drained already may have made room
 * a later request took, so only the rest is given back. Never more than the charge still weighs on the bucket.
 */
export function undrained(charge: Charge, now: number, params: LimitParams): number {
  const units = charge.cost * params.windowMs;
  if (charge.at === undefined || charge.resetMs === undefined) return units;
  return Math.min(units, Math.max(0, (charge.at + charge.resetMs - now) * params.limit));
}

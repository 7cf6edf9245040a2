import { type Charge, undrained } from './charge.js';
import { type AlgorithmDescriptor, hasNumbers } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';

/**
 * gcra state: the theoretical arrival time (TAT) `tat + sub / limit` ms. The sub-millisecond part is an
 * integer count of 1/limit ms, so that the emission interval windowMs/limit is exact.
 */
export interface GcraState {
  /** Whole milliseconds of the TAT (epoch ms). */
  readonly tat: number;
  /** Remaining part of the TAT, in 1/limit ms: an integer in [0, limit). */
  readonly sub: number;
}

/** Whether a stored value is a gcra (or leaky_bucket) state. */
export function isGcraState(value: unknown): value is GcraState {
  return hasNumbers(value, 'tat', 'sub');
}

/** Capacity in 1/limit ms: `burst` emission intervals of windowMs/limit ms each. */
export function toleranceUnits(p: LimitParams): number {
  return p.limit > 0 ? p.burst * p.windowMs : 0;
}

/**
 * How far the TAT lies ahead of `now`, in 1/limit ms (0 when it is in the past), at most the tolerance.
 * gcra never sets it further ahead than the tolerance; a clock that stepped back can find it up to one
 * tolerance more ahead, which reads as the tolerance: a full bucket, whose wait is never longer than the
 * tolerance. A TAT further ahead still (or not a number) is stale or corrupt and reads as no debt.
 */
export function debtAt(state: GcraState | undefined, now: number, p: LimitParams): number {
  if (state === undefined || state.tat < now) return 0;
  // Small while the TAT is within reach; far ahead it is only compared (rounded, it still compares right).
  const debt = (state.tat - now) * p.limit + state.sub;
  const tolerance = toleranceUnits(p);
  if (debt <= tolerance) return Math.max(0, debt);
  return debt <= 2 * tolerance ? tolerance : 0;
}

/** The state whose TAT lies `debt` units (1/limit ms) after `now`. */
export function stateWithDebt(now: number, debt: number, p: LimitParams): GcraState {
  if (p.limit <= 0) return { tat: now, sub: 0 }; // a rule with no rate has no debt (and 0/0 is NaN)
  const whole = Math.floor(debt / p.limit);
  return { tat: now + whole, sub: debt - whole * p.limit };
}

/** Whole ms until `debt` units are paid off (0 for a rule with no rate, which has no debt either). */
export function msFor(debt: number, p: LimitParams): number {
  return p.limit > 0 ? Math.ceil(debt / p.limit) : 0;
}

/**
 * Takes what is left of a charge off the debt (see `undrained`), never below none (gcra and leaky_bucket):
 * the TAT moves back by that much. Undefined when nothing is owed or nothing of the charge is left.
 */
export function refundDebt(
  state: GcraState,
  now: number,
  p: LimitParams,
  charge: Charge,
): { state: GcraState; ttlMs: number } | undefined {
  const t = Math.floor(now);
  const debt = debtAt(state, t, p);
  const given = undrained(charge, t, p);
  if (!(debt > 0 && given > 0)) return undefined;
  const owed = Math.max(0, debt - given);
  return { state: stateWithDebt(t, owed, p), ttlMs: msFor(owed, p) };
}

/**
 * gcra: the generic cell rate algorithm. Each unit of cost pushes the TAT by windowMs/limit; a request is
 * allowed when the pushed TAT lies no more than burst * windowMs/limit ahead of now. One stored time,
 * the same decisions as token_bucket.
 */
export const gcra: AlgorithmDescriptor<'gcra', GcraState> = {
  name: 'gcra',
  lua: 'gc',
  limit: 'requests',
  burst: true,
  calendar: false,
  leasable: true,
  release: 'refund',
  refundLua: 'gcr',
  refund: refundDebt,
  isState: isGcraState,
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const tolerance = toleranceUnits(params);
    const debt = debtAt(state, t, params);
    const added = cost * params.windowMs;
    if (added > tolerance || debt + added > tolerance) {
      const resetMs = msFor(debt, params);
      const outcome: Outcome<GcraState> = {
        allowed: false,
        state: state ?? { tat: t, sub: 0 },
        limit: params.limit,
        remaining: Math.floor((tolerance - debt) / params.windowMs),
        resetMs,
        retryAfterMs: added > tolerance ? Number.POSITIVE_INFINITY : msFor(debt + added - tolerance, params),
        ttlMs: resetMs,
      };
      return outcome;
    }
    const next = debt + added;
    const resetMs = msFor(next, params);
    return {
      allowed: true,
      state: stateWithDebt(t, next, params),
      limit: params.limit,
      remaining: Math.floor((tolerance - next) / params.windowMs),
      resetMs,
      retryAfterMs: 0,
      ttlMs: resetMs,
    };
  },
};

import { type Charge, undrained } from './charge.js';
import { hasNumbers } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';

/**
 * The arithmetic gcra and leaky_bucket share: one stored time (the TAT) ahead of `now` by a debt of at most
 * `burst` emission intervals. gcra reads the debt as units spent ahead of the rate; leaky_bucket as the queue
 * a request waits behind. Durations in ms, debts in 1/limit ms.
 */

/**
 * The theoretical arrival time (TAT) `tat + sub / limit` ms. The sub-millisecond part is an integer count of
 * 1/limit ms, so that the emission interval windowMs/limit is exact.
 */
export interface DebtState {
  /** Whole milliseconds of the TAT (epoch ms). */
  readonly tat: number;
  /** Remaining part of the TAT, in 1/limit ms: an integer in [0, limit). */
  readonly sub: number;
}

/** Whether a stored value is a gcra (or leaky_bucket) state. */
export function isDebtState(value: unknown): value is DebtState {
  return hasNumbers(value, 'tat', 'sub');
}

/** Capacity in 1/limit ms: `burst` emission intervals of windowMs/limit ms each. */
export function toleranceUnits(p: LimitParams): number {
  return p.limit > 0 ? p.burst * p.windowMs : 0;
}

/**
 * How far the TAT lies ahead of `now`, in 1/limit ms (0 when it is in the past), at most the tolerance.
 * The TAT is never set further ahead than the tolerance; a clock that stepped back can find it up to one
 * tolerance more ahead, which reads as the tolerance: a full bucket, whose wait is never longer than the
 * tolerance. A TAT further ahead still (a clock a year ahead) or not a number is stale or corrupt and reads
 * as no debt; but one whose stored numbers lie past 2^53 is no time any clock writes: it is a debt past any
 * limit, which reads as a full bucket, as a count past 2^53 denies in every algorithm (README, Time and numbers).
 */
export function debtAt(state: DebtState | undefined, now: number, p: LimitParams): number {
  if (state === undefined || !Number.isFinite(state.tat) || state.tat < now) return 0;
  // Small while the TAT is within reach; far ahead it is only compared (rounded, it still compares right).
  const debt = (state.tat - now) * p.limit + state.sub;
  const tolerance = toleranceUnits(p);
  if (debt <= tolerance) return Math.max(0, debt);
  if (debt <= 2 * tolerance) return tolerance;
  return debt > 2 * tolerance && (pastAnyClock(state.tat) || pastAnyClock(state.sub)) ? tolerance : 0;
}

/** A finite stored number at or past 2^53: no clock's time, and no longer exact (Lua: gcra's past_any_clock). */
function pastAnyClock(x: number): boolean {
  return Number.isFinite(x) && x >= 2 ** 53;
}

/** The state whose TAT lies `debt` units (1/limit ms) after `now`. */
export function stateWithDebt(now: number, debt: number, p: LimitParams): DebtState {
  if (p.limit <= 0) return { tat: now, sub: 0 }; // a rule with no rate has no debt (and 0/0 is NaN)
  const whole = Math.floor(debt / p.limit);
  return { tat: now + whole, sub: debt - whole * p.limit };
}

/** Whole ms until `debt` units are paid off (0 for a rule with no rate, which has no debt either). */
export function msFor(debt: number, p: LimitParams): number {
  return p.limit > 0 ? Math.ceil(debt / p.limit) : 0;
}

type Written<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A request of `cost` units: allowed when the debt with it stays within the tolerance (the TAT pushed by
 * windowMs/limit per unit); a cost beyond the tolerance can never be allowed. With `waits` (leaky_bucket) the
 * outcome also says how long the request waits behind the debt before it (`delayMs`, 0 when denied); without,
 * it has no `delayMs` at all, as a store expects of an algorithm that does not delay.
 */
export function spendDebt(
  state: DebtState | undefined,
  now: number,
  p: LimitParams,
  cost: number,
  waits: boolean,
): Outcome<DebtState> {
  const t = Math.floor(now);
  const tolerance = toleranceUnits(p);
  const debt = debtAt(state, t, p);
  const added = cost * p.windowMs;
  if (added > tolerance || debt + added > tolerance) {
    const resetMs = msFor(debt, p);
    const denied: Written<Outcome<DebtState>> = {
      allowed: false,
      state: state ?? { tat: t, sub: 0 },
      limit: p.limit,
      remaining: Math.floor((tolerance - debt) / p.windowMs),
      resetMs,
      retryAfterMs: added > tolerance ? Number.POSITIVE_INFINITY : msFor(debt + added - tolerance, p),
      ttlMs: resetMs,
    };
    if (waits) denied.delayMs = 0;
    return denied;
  }
  const next = debt + added;
  const resetMs = msFor(next, p);
  const allowed: Written<Outcome<DebtState>> = {
    allowed: true,
    state: stateWithDebt(t, next, p),
    limit: p.limit,
    remaining: Math.floor((tolerance - next) / p.windowMs),
    resetMs,
    retryAfterMs: 0,
    ttlMs: resetMs,
  };
  if (waits) allowed.delayMs = msFor(debt, p);
  return allowed;
}

/**
 * Takes what is left of a charge off the debt (see `undrained`), never below none (gcra and leaky_bucket):
 * the TAT moves back by that much. Undefined when nothing is owed or nothing of the charge is left.
 */
export function refundDebt(
  state: DebtState,
  now: number,
  p: LimitParams,
  charge: Charge,
): { state: DebtState; ttlMs: number } | undefined {
  const t = Math.floor(now);
  const debt = debtAt(state, t, p);
  const given = undrained(charge, t, p);
  if (!(debt > 0 && given > 0)) return undefined;
  const owed = Math.max(0, debt - given);
  return { state: stateWithDebt(t, owed, p), ttlMs: msFor(owed, p) };
}

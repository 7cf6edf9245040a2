import { type AlgorithmName, undrained } from '../algorithms/index.js';
import type { Decision } from '../observe/contract.js';
import type { Lease } from '../store/contract.js';

/*
 * Reserve and settle, the engine's part. A rule with `settle: true` charges its cost at admission as an
 * estimate and the decision keeps a reservation lease per such rule (engine/decision.ts). `limiter.settle`
 * turns the actual costs into what the store does, once per decision: units given back (a refund lease) or
 * charged on top (an `owed` lease, debt beyond the limit), all in ONE store call per store.
 */

/** The actual cost of the request: one number for every settled rule, or per rule name. */
export type ActualCosts = number | Readonly<Record<string, number>>;

/**
 * How a settle went. `settled`: the differences went to the store (a store that failed is logged and
 * counted by the store's own resilience, the estimate then stands). `already_settled`: a second settle (or a
 * settle after `cancel`), nothing done. `not_reserved`: the decision holds no reservation (denied, no rule
 * with `settle`, or not made by this limiter), nothing done. `invalid_cost`: an actual cost that is not a
 * finite number >= 0, nothing done and the decision still open: a corrected settle may follow.
 */
export type SettleOutcome = 'settled' | 'already_settled' | 'not_reserved' | 'invalid_cost';

/** What `limiter.settle` answers; never thrown. */
export interface Settlement {
  /** How the settle went (see {@link SettleOutcome}); every other outcome than `settled` did nothing. */
  readonly outcome: SettleOutcome;
  /**
   * Units charged on top of the estimates (actual above estimate), summed over the decision's rules. They are
   * spent: charged without a limit check, what the key has no room for becoming debt. 0 when none.
   */
  readonly charged: number;
  /**
   * Units of the estimates really given back (actual below estimate), summed over the decision's rules: only
   * what the rule still counts at the settle, as its algorithm gives back. A window that rolled over since
   * the admission gives nothing back (0: the estimate was counted in a window that is gone), a bucket only
   * what has not drained yet, a sliding log only while the charge's entry is in its window. 0 when none.
   */
  readonly givenBack: number;
}

/** A settle that did nothing, with why. */
function nothing(outcome: SettleOutcome): Settlement {
  return { outcome, charged: 0, givenBack: 0 };
}

/** A cost as settled: a finite number >= 0, rounded up to whole units; undefined when it is not one. */
export function settledCost(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}

/** The actual cost for one rule: undefined leaves its estimate standing; NaN marks an invalid one. */
function actualFor(actual: ActualCosts, rule: string): number | undefined {
  if (typeof actual === 'number') return settledCost(actual) ?? Number.NaN;
  if (typeof actual !== 'object' || actual === null) return Number.NaN;
  if (!Object.hasOwn(actual, rule)) return undefined;
  return settledCost(actual[rule]) ?? Number.NaN;
}

/** Whether every value of `actual` is a cost (so a typo'd record does not half settle). */
function validActual(actual: unknown): actual is ActualCosts {
  if (typeof actual === 'number') return settledCost(actual) !== undefined;
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
  return Object.values(actual).every((value) => settledCost(value) !== undefined);
}

/** What the store does for one reservation settled at `cost`: a refund, an owed charge, or nothing. */
function settleLease(lease: Lease, cost: number): Lease | undefined {
  const estimate = lease.refund!;
  const { rule, tag, algorithm, scope } = lease;
  const delta = cost - estimate.cost;
  if (delta < 0)
    return {
      rule,
      tag,
      algorithm,
      id: '',
      scope,
      refund: { cost: -delta, params: estimate.params, at: estimate.at, resetMs: estimate.resetMs },
    };
  if (delta > 0)
    return { rule, tag, algorithm, id: '', scope, owed: { cost: delta, params: estimate.params } };
  return undefined;
}

/**
 * The units of a give-back the store really takes off at `now`, as each algorithm's refund does (the state
 * aside: a key emptied meanwhile gives back less): a window's count only within the charge's window, a
 * bucket's only what has not drained yet, a log's only while the charge's entry is in the window.
 */
function givenBackAt(algorithm: AlgorithmName, refund: NonNullable<Lease['refund']>, now: number): number {
  const { cost, at, params } = refund;
  if (at === undefined) return cost;
  const t = Math.floor(now);
  const size = params.windowMs;
  switch (algorithm) {
    case 'gcra':
    case 'token_bucket':
    case 'leaky_bucket':
      return size > 0 ? Math.min(cost, Math.floor(undrained(refund, t, params) / size)) : 0;
    case 'fixed_window':
    case 'sliding_window':
      return Math.floor(t / size) === Math.floor(Math.floor(at) / size) ? cost : 0;
    case 'sliding_log':
      return t - Math.floor(at) < size ? cost : 0;
    default:
      // Period counters (quota, first_request_window): until the period's end, when the charge's count reset.
      return refund.resetMs === undefined || t < at + refund.resetMs ? cost : 0;
  }
}

/** The reservations each decision holds, settled at most once (a cancel counts as settling at zero). */
export class Settlements {
  readonly #done = new WeakSet<Decision>();

  /** Marks the decision settled (its response never came: `cancel` gave the reservations back). */
  close(decision: Decision): void {
    this.#done.add(decision);
  }

  /** The leases to send for `settle(decision, actual)` at `now`, and the answer; never throws. */
  plan(
    decision: Decision,
    actual: unknown,
    now: number,
  ): { settlement: Settlement; leases: readonly Lease[] } {
    const reserved = (decision?.leases ?? []).filter((lease) => lease.reserved === true);
    if (reserved.length === 0) return { settlement: nothing('not_reserved'), leases: [] };
    if (this.#done.has(decision)) return { settlement: nothing('already_settled'), leases: [] };
    if (!validActual(actual)) return { settlement: nothing('invalid_cost'), leases: [] };
    this.#done.add(decision);
    const leases: Lease[] = [];
    let charged = 0;
    let givenBack = 0;
    for (const lease of reserved) {
      const cost = actualFor(actual, lease.rule);
      if (cost === undefined) continue;
      const settled = settleLease(lease, cost);
      if (settled === undefined) continue;
      leases.push(settled);
      charged += settled.owed?.cost ?? 0;
      if (settled.refund !== undefined) givenBack += givenBackAt(settled.algorithm, settled.refund, now);
    }
    return { settlement: { outcome: 'settled', charged, givenBack }, leases };
  }
}

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

export interface Settlement {
  readonly outcome: SettleOutcome;
  /** Units charged on top of the estimates, summed over the decision's rules. */
  readonly charged: number;
  /** Units of the estimates given back, summed over the decision's rules. */
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

/** The reservations each decision holds, settled at most once (a cancel counts as settling at zero). */
export class Settlements {
  readonly #done = new WeakSet<Decision>();

  /** Marks the decision settled (its response never came: `cancel` gave the reservations back). */
  close(decision: Decision): void {
    this.#done.add(decision);
  }

  /** The leases to send for `settle(decision, actual)`, and the answer; never throws. */
  plan(decision: Decision, actual: unknown): { settlement: Settlement; leases: readonly Lease[] } {
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
      givenBack += settled.refund?.cost ?? 0;
    }
    return { settlement: { outcome: 'settled', charged, givenBack }, leases };
  }
}

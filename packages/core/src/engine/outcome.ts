import type { CountOutcome, RuleScope } from '../rules/contract.js';
import type { Check, Lease } from '../store/contract.js';

/**
 * Counting by outcome (a rule's `count`): every request is charged when it is decided, and the charge goes
 * back when its response ends with a status the rule does not count. These decide what goes back when.
 */

/** Whether a rule with `count: outcome` keeps the charge of a response with `status` (failures: >= 400). */
export function counts(outcome: CountOutcome, status: number): boolean {
  if (outcome === 'failed') return status >= 400;
  if (outcome === 'succeeded') return status < 400;
  return outcome.includes(status);
}

/**
 * The lease that gives the charge of a `count` rule's check back: its units, the rule's params, when it was
 * charged and the store's resetMs for it (so the refund stays within the window it was counted in).
 */
export function chargeLease(
  check: Check,
  scope: RuleScope,
  now: number,
  resetMs: number,
  count: CountOutcome | undefined,
  reserved?: true,
): Lease {
  const { rule, tag, algorithm, cost, params } = check;
  const refund =
    count === undefined ? { cost, params, at: now, resetMs } : { cost, params, at: now, resetMs, count };
  return reserved === true
    ? { rule, tag, algorithm, id: '', scope, refund, reserved }
    : { rule, tag, algorithm, id: '', scope, refund };
}

/**
 * What goes back when a response ends: every lease held, and the charges of `count` rules that do not keep
 * `status`. Without a status (the client left before a response) charges stay: an aborted request is
 * charged. leaky_bucket places are not given back here: the request was served.
 */
export function givenBackAtEnd(leases: readonly Lease[], status: number | undefined): readonly Lease[] {
  return leases.filter((lease) => {
    const refund = lease.refund;
    if (refund === undefined) return true;
    return refund.count !== undefined && status !== undefined && !counts(refund.count, status);
  });
}

/**
 * What goes back when a request is given up before it was served (the client left while it waited): its
 * leases unless its response end gave them back already, and its queue places; charges stay (aborted).
 */
export function givenBackOnCancel(leases: readonly Lease[], released: boolean): readonly Lease[] {
  return leases.filter((lease) =>
    lease.refund === undefined ? !released : lease.refund.count === undefined,
  );
}

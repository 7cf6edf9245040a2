import { decideByName } from '../algorithms/index.js';
import type { LimitParams, Outcome } from '../algorithms/limits.js';
import type { Check, Lease } from './contract.js';

/*
 * Reserve and settle, the store's part. A settle above a request's estimate charges the difference on top
 * (no limit check: the units were spent); what the key has no room for becomes debt: a count of units kept in
 * one more key per rule and key tag. The key's next admission must fit its own cost plus the debt, and pays
 * both when it does: a request waits exactly as long as the counter takes to hold them (the algorithm's own
 * retry). A debt larger than the counter ever holds is paid off as room comes, the wait counted at the rule's
 * rate. RedisStore's Lua does the same (policy.ts).
 */

/** One key of a store, as the evaluator names them (evaluate.ts's StateKey; declared here too: no loop). */
interface DebtKey {
  readonly rule: string;
  readonly tag: string;
}

/** What settle needs of a store's keys during one call (evaluate.ts's StateTable). */
interface Table {
  get(rule: string, tag: string): unknown;
  set(rule: string, tag: string, state: unknown, expiresAt: number | undefined): void;
}

/** The key holding when a rule's key has paid off its debt: the rule name with a suffix no rule name can have. */
export function debtKey(rule: string, tag: string): DebtKey {
  return { rule: `${rule}:debt`, tag };
}

/** The units the key owes, 0 when none. */
export function debtOf(table: Table, rule: string, tag: string): number {
  const key = debtKey(rule, tag);
  const owed = table.get(key.rule, key.tag);
  return typeof owed === 'number' && Number.isFinite(owed) && owed > 0 ? owed : 0;
}

/** The ms `units` take to be paid off at the rule's rate (limit per window); 0 for a rule with no rate. */
export function debtMs(units: number, params: LimitParams): number {
  return params.limit > 0 ? Math.ceil((units * params.windowMs) / params.limit) : 0;
}

/**
 * Sets what the key owes. It lasts as long as paying it off takes, plus two windows: the next window of a
 * windowed counter must still find it; past that, an idle key is forgiven (a bucket would be whole again).
 */
function setDebt(
  table: Table,
  rule: string,
  tag: string,
  owed: number,
  now: number,
  params: LimitParams,
): void {
  const key = debtKey(rule, tag);
  table.set(key.rule, key.tag, owed, owed > 0 ? now + debtMs(owed, params) + 2 * params.windowMs : now);
}

/** A committed admission paid the key's debt: it owes nothing now. */
export function clearDebt(table: Table, rule: string, tag: string, now: number): void {
  const key = debtKey(rule, tag);
  if (table.get(key.rule, key.tag) !== undefined) table.set(key.rule, key.tag, 0, now);
}

/**
 * A check of a key owing `owed` units: decided at its cost plus the debt (committed, it pays both; see
 * clearDebt), so its wait is the algorithm's own for both. A debt the counter can never hold at once is paid
 * now as far as there is room (written at once, like a penalty), and the request waits until the counter is
 * whole again, to pay the next part.
 */
export function decideInDebt(
  check: Check,
  state: unknown,
  owed: number,
  now: number,
  table: Table,
): { outcome: Outcome<unknown>; commit: boolean } {
  const { algorithm, params, cost, leaseId } = check;
  const outcome = decideByName(algorithm, state, now, params, cost + owed, leaseId);
  if (outcome.allowed) return { outcome, commit: true };
  // Owing, the key has nothing to spend.
  if (Number.isFinite(outcome.retryAfterMs)) return { outcome: { ...outcome, remaining: 0 }, commit: false };
  const room = Math.min(owed, Math.max(0, Math.floor(outcome.remaining)));
  const paid = room > 0 ? decideByName(algorithm, state, now, params, room, leaseId) : undefined;
  let left = owed;
  if (paid?.allowed === true) {
    table.set(check.rule, check.tag, paid.state, now + paid.ttlMs);
    left -= room;
  }
  setDebt(table, check.rule, check.tag, left, now, params);
  const whole = Math.max(outcome.resetMs, left < owed ? paid!.resetMs : 0);
  const denied = { ...outcome, remaining: 0, resetMs: whole, retryAfterMs: whole };
  return { outcome: denied, commit: false };
}

/**
 * Charges a settle's `owed` units on the lease's key: all of them when they fit, else what room is left and
 * the rest as debt, added to any debt the key already has.
 */
export function chargeOwed(lease: Lease, now: number, table: Table): void {
  const owed = lease.owed;
  if (owed === undefined || !(owed.cost > 0)) return;
  const state = table.get(lease.rule, lease.tag);
  const whole = decideByName(lease.algorithm, state, now, owed.params, owed.cost);
  let charged = whole.allowed ? whole : undefined;
  if (charged === undefined) {
    const room = Math.min(owed.cost, Math.max(0, Math.floor(whole.remaining)));
    const part = room > 0 ? decideByName(lease.algorithm, state, now, owed.params, room) : undefined;
    charged = part?.allowed === true ? part : undefined;
    const excess = owed.cost - (charged === undefined ? 0 : room);
    const total = debtOf(table, lease.rule, lease.tag) + excess;
    setDebt(table, lease.rule, lease.tag, total, now, owed.params);
  }
  if (charged !== undefined) table.set(lease.rule, lease.tag, charged.state, now + charged.ttlMs);
}

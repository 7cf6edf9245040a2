import { concurrency, renewLease } from '../algorithms/concurrency.js';
import { decideByName, releasedState } from '../algorithms/index.js';
import type { Outcome } from '../algorithms/limits.js';
import { DecisionError } from '../base/errors.js';
import type { Check, CheckResult, Lease, SlotHint } from './contract.js';
import { type BanState, decidePolicy, isBanState } from './policies.js';
import { chargeOwed, clearDebt, debtKey, debtOf, decideInDebt } from './settle.js';

/*
 * The evaluator: every store's decision, over a table of key states the store provides (MemoryStore's slots, a
 * PostgreSQL transaction's locked rows, a Map). A store makes the call atomic; the evaluator decides what the
 * call reads and writes. States are plain JSON values. A state the evaluator cannot decide on throws a
 * DecisionError naming the rule: the store answered, so that request fails open and the store stays reachable.
 */

/** One key of a store: a counter, a ban state or an idempotency marker. */
export interface StateKey {
  readonly rule: string;
  readonly tag: string;
}

/** A store's view of its keys during one atomic call (a Map, a transaction's rows, ...). */
export interface StateTable {
  /**
   * The live state of a key; undefined when none or expired at the call's `now`. `hint`: the check's (see
   * SlotHint), for a table that can use it.
   */
  get(rule: string, tag: string, hint?: SlotHint): unknown;
  /**
   * Sets a key's state, expiring at `expiresAt` (ms, the same clock as `now`). `expiresAt` undefined keeps the
   * key's expiry as it is: a release that gives back no new TTL (the evaluator passes it only for a key whose
   * live state it just read).
   */
  set(rule: string, tag: string, state: unknown, expiresAt: number | undefined, hint?: SlotHint): void;
}

/** The key of a rule's ban state for a key: the rule name with a suffix no rule name can have. */
export function banKey(rule: string, tag: string): StateKey {
  return { rule: `${rule}:ban`, tag };
}

/** The key of a request's idempotency marker: per rule, key tag and idempotency id. */
export function markerKey(check: Check, id: string): StateKey {
  return { rule: `${check.rule}:idem`, tag: `${check.tag}.${id}` };
}

/** Every key evaluateChecks may read for these checks: counters, ban states, idempotency markers. */
export function stateKeys(checks: readonly Check[]): StateKey[] {
  const keys: StateKey[] = [];
  for (const check of checks) {
    keys.push({ rule: check.rule, tag: check.tag });
    if (check.policy?.ban !== undefined) keys.push(banKey(check.rule, check.tag));
    if (check.idempotencyId !== undefined && check.policy?.idempotentMs !== undefined)
      keys.push(markerKey(check, check.idempotencyId));
    if (check.policy?.debt === true) keys.push(debtKey(check.rule, check.tag));
  }
  return keys;
}

/** Every key releaseLeases may read for these leases. */
export function leaseStateKeys(leases: readonly Lease[]): StateKey[] {
  const keys: StateKey[] = leases.map(({ rule, tag }) => ({ rule, tag }));
  for (const lease of leases) if (lease.owed !== undefined) keys.push(debtKey(lease.rule, lease.tag));
  return keys;
}

/** Decides every check against the table, writes back only when no enforcing check denies (policies' own writes aside). */
export function evaluateChecks(checks: readonly Check[], now: number, table: StateTable): CheckResult[] {
  return evaluateOutcomes(checks, now, table).map(toResult);
}

/**
 * evaluateChecks without the copy: each result is the algorithm's outcome, which also holds the key's new state
 * (MemoryStore hands these to the engine, which only reads them).
 */
export function evaluateOutcomes(
  checks: readonly Check[],
  now: number,
  table: StateTable,
): Outcome<unknown>[] {
  const outcomes: Outcome<unknown>[] = new Array(checks.length);
  let blocked = false;
  /** Per check, with a policy only: true when its outcome must not be written (a marker's answer, a denial). */
  let skip: boolean[] | undefined;
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const state = table.get(check.rule, check.tag, check.hint);
    let outcome: Outcome<unknown>;
    try {
      if (check.policy === undefined)
        outcome = decideByName(check.algorithm, state, now, check.params, check.cost, check.leaseId);
      else {
        skip ??= [];
        const step = decideWithPolicy(check, state, now, table);
        skip[i] = !step.commit;
        outcome = step.outcome;
      }
    } catch (error) {
      throw new DecisionError(check.rule, error);
    }
    outcomes[i] = outcome;
    if (!outcome.allowed && check.mode === 'enforce') blocked = true;
  }
  if (!blocked) commit(checks, outcomes, skip, now, table);
  return outcomes;
}

/** Writes the allowed outcomes (and the idempotency markers of the checks that charged). */
function commit(
  checks: readonly Check[],
  outcomes: readonly Outcome<unknown>[],
  skip: readonly boolean[] | undefined,
  now: number,
  table: StateTable,
): void {
  for (let i = 0; i < checks.length; i++) {
    const outcome = outcomes[i]!;
    if (!outcome.allowed || skip?.[i] === true) continue;
    const check = checks[i]!;
    table.set(check.rule, check.tag, outcome.state, now + outcome.ttlMs, check.hint);
    if (check.policy?.debt === true) clearDebt(table, check.rule, check.tag, now);
    const markMs = check.policy?.idempotentMs;
    if (check.idempotencyId !== undefined && markMs !== undefined) {
      const marker = markerKey(check, check.idempotencyId);
      table.set(marker.rule, marker.tag, true, now + markMs);
    }
  }
}

/**
 * One check under its rule's policy (policies.ts): reads the key's ban state and the request's marker, and writes
 * at once what a denial changes (violations, ban, penalty), whatever the other checks decide.
 */
function decideWithPolicy(check: Check, state: unknown, now: number, table: StateTable) {
  const policy = check.policy!;
  const owed = policy.debt === true ? debtOf(table, check.rule, check.tag) : 0;
  if (owed > 0) return decideInDebt(check, state, owed, now, table);
  const banId = policy.ban === undefined ? undefined : banKey(check.rule, check.tag);
  const banValue = banId === undefined ? undefined : table.get(banId.rule, banId.tag);
  const ban: BanState | undefined = isBanState(banValue) ? banValue : undefined;
  const marker = check.idempotencyId === undefined ? undefined : markerKey(check, check.idempotencyId);
  const marked = marker !== undefined && table.get(marker.rule, marker.tag) !== undefined;
  const step = decidePolicy(check, policy, state, ban, marked, now);
  if (step.penalty !== undefined)
    table.set(check.rule, check.tag, step.penalty.state, now + step.penalty.ttlMs);
  if (step.ban !== undefined && banId !== undefined)
    table.set(banId.rule, banId.tag, step.ban.state, now + step.ban.ttlMs);
  return step;
}

/** Gives back what the leases hold (releases, refunds), through the table. */
export function releaseLeases(leases: readonly Lease[], now: number, table: StateTable): void {
  for (const lease of leases) {
    let released: ReturnType<typeof releasedState>;
    try {
      if (lease.owed !== undefined) {
        chargeOwed(lease, now, table);
        continue;
      }
      released = releasedState(table.get(lease.rule, lease.tag), lease, now);
    } catch (error) {
      throw new DecisionError(lease.rule, error);
    }
    if (released === undefined) continue;
    table.set(
      lease.rule,
      lease.tag,
      released.state,
      released.ttlMs === undefined ? undefined : now + released.ttlMs,
    );
  }
}

/**
 * Extends the concurrency leases still held to `now + leaseMs` (a long-lived connection's heartbeat), through
 * the table; a lease released or expired stays gone, and other leases are ignored.
 */
export function renewLeases(leases: readonly Lease[], now: number, table: StateTable): number {
  let missing = 0;
  for (const lease of leases) {
    if (lease.refund !== undefined || lease.leaseMs === undefined || lease.algorithm !== 'concurrency')
      continue;
    const state = table.get(lease.rule, lease.tag);
    let renewed: ReturnType<typeof renewLease>;
    try {
      renewed = renewLease(concurrency.isState(state) ? state : undefined, lease.id, now, lease.leaseMs);
    } catch (error) {
      throw new DecisionError(lease.rule, error);
    }
    if (renewed === undefined) missing++;
    else table.set(lease.rule, lease.tag, renewed.state, now + renewed.ttlMs);
  }
  return missing;
}

/** A result holding only CheckResult's fields: an outcome's state must not leave the store. */
export function toResult(outcome: CheckResult): CheckResult {
  const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs } = outcome;
  const result: CheckResult =
    delayMs === undefined
      ? { allowed, limit, remaining, resetMs, retryAfterMs }
      : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs };
  const { bannedUntil, banStarted, replayed, violations } = outcome;
  if (bannedUntil === undefined && replayed === undefined && violations === undefined) return result;
  return {
    ...result,
    ...(bannedUntil === undefined ? {} : { bannedUntil, banStarted: banStarted === true }),
    ...(replayed === undefined ? {} : { replayed }),
    ...(violations === undefined ? {} : { violations }),
  };
}

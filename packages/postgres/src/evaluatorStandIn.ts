/**
 * STAND-IN for the evaluator of `@sluice/core/store` (the redesign, /work/notes/redesign.md "The evaluator
 * contract"), which does not exist yet. It has exactly that contract's five functions, made minimally over core's
 * `decideByName` and `releasedState`: no policies (ban, penalty, idempotency: a check with one is refused).
 * To be deleted when `@sluice/core/store` ships: evaluator.ts then re-exports from there, one line.
 */
import { type Check, type CheckResult, decideByName, type Lease, releasedState } from '@sluice/core';
import { UnsupportedCheckError } from './errors.js';

export interface StateKey {
  readonly rule: string;
  readonly tag: string;
}

/** A store's view of its keys during one atomic call. */
export interface StateTable {
  /** The live state of a key; undefined when none or expired at `now`. */
  get(rule: string, tag: string): unknown;
  /** Sets a key's state, expiring at `expiresAt` (ms, the same clock as `now`). */
  set(rule: string, tag: string, state: unknown, expiresAt: number): void;
}

/**
 * A release that leaves a key's TTL as it was needs the key's expiry, which the contract's StateTable does not
 * give: the stand-in reads it from a table that has it (PostgreSQL's does), else keeps the key a day.
 */
interface ExpiringTable extends StateTable {
  expiresAt?(rule: string, tag: string): number | undefined;
}

const DAY_MS = 86_400_000;

/** Every key evaluateChecks may read for these checks (the stand-in: each check's counter). */
export function stateKeys(checks: readonly Check[]): StateKey[] {
  return checks.map(({ rule, tag }) => ({ rule, tag }));
}

/** Every key releaseLeases may read for these leases. */
export function leaseStateKeys(leases: readonly Lease[]): StateKey[] {
  return leases.map(({ rule, tag }) => ({ rule, tag }));
}

/** Decides every check against the table; writes back only when no enforcing check denies. */
export function evaluateChecks(checks: readonly Check[], now: number, table: StateTable): CheckResult[] {
  const outcomes = checks.map((check) => {
    if (check.policy !== undefined) throw new UnsupportedCheckError(check.rule);
    const state = table.get(check.rule, check.tag);
    return decideByName(check.algorithm, state, now, check.params, check.cost, check.leaseId);
  });
  const blocked = outcomes.some((outcome, i) => !outcome.allowed && checks[i]!.mode === 'enforce');
  if (!blocked) {
    outcomes.forEach((outcome, i) => {
      const check = checks[i]!;
      if (outcome.allowed) table.set(check.rule, check.tag, outcome.state, now + outcome.ttlMs);
    });
  }
  return outcomes.map(({ allowed, limit, remaining, resetMs, retryAfterMs, delayMs }) =>
    delayMs === undefined
      ? { allowed, limit, remaining, resetMs, retryAfterMs }
      : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs },
  );
}

/** Gives back what the leases hold (releases, refunds), through the table. */
export function releaseLeases(leases: readonly Lease[], now: number, table: StateTable): void {
  for (const lease of leases) {
    const released = releasedState(table.get(lease.rule, lease.tag), lease, now);
    if (released === undefined) continue;
    const expiresAt =
      released.ttlMs !== undefined
        ? now + released.ttlMs
        : ((table as ExpiringTable).expiresAt?.(lease.rule, lease.tag) ?? now + DAY_MS);
    table.set(lease.rule, lease.tag, released.state, expiresAt);
  }
}

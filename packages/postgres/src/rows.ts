import type { StateKey, StateTable } from '@sluice/core/store';

/** One counter's row as read under lock: its state (null for a row made only to be locked) and expiry. */
export interface LockedRow {
  readonly rule: string;
  readonly tag: string;
  readonly state: unknown;
  readonly expiresAt: number;
}

/** A row the call writes back at its end. */
export interface RowWrite extends LockedRow {}

/** rule and tag in one Map key: neither can hold NUL (PostgreSQL text cannot), so it separates them. */
export function keyOf(rule: string, tag: string): string {
  return `${rule}\u0000${tag}`;
}

/**
 * The keys one call locks, each once, in one order every process uses (by rule, then tag): two transactions
 * wanting the same rows take them in the same order, so they queue instead of deadlocking.
 */
export function lockOrder(keys: readonly StateKey[]): readonly StateKey[] {
  if (keys.length === 1) return keys; // the common one-rule call: nothing to order
  const unique = new Map<string, StateKey>();
  for (const key of keys) unique.set(keyOf(key.rule, key.tag), key);
  return [...unique.values()].sort((a, b) =>
    a.rule === b.rule ? compare(a.tag, b.tag) : compare(a.rule, b.rule),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The evaluator's view of one transaction's locked rows: reads see the rows as locked and every write made
 * since in the call; writes are kept for the commit.
 */
export class RowTable implements StateTable {
  readonly #rows = new Map<string, LockedRow>();
  readonly #writes = new Map<string, RowWrite>();
  readonly #now: number;

  constructor(rows: readonly LockedRow[], now: number) {
    for (const row of rows) this.#rows.set(keyOf(row.rule, row.tag), row);
    this.#now = now;
  }

  #row(rule: string, tag: string): LockedRow | undefined {
    const key = keyOf(rule, tag);
    return this.#writes.get(key) ?? this.#rows.get(key);
  }

  get(rule: string, tag: string): unknown {
    const row = this.#row(rule, tag);
    if (row === undefined || row.state === null || row.expiresAt <= this.#now) return undefined;
    return row.state;
  }

  /** `expiresAt` undefined keeps the row's expiry (a release that gives back no new TTL). */
  set(rule: string, tag: string, state: unknown, expiresAt: number | undefined): void {
    const kept = expiresAt ?? this.#row(rule, tag)?.expiresAt ?? Number.NEGATIVE_INFINITY;
    this.#writes.set(keyOf(rule, tag), { rule, tag, state, expiresAt: kept });
  }

  /** What the call writes back, one entry per row. */
  get writes(): readonly RowWrite[] {
    return [...this.#writes.values()];
  }
}

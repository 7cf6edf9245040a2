/**
 * A store written only against `@sluice/core/store`, as a store author would: a Map of key states, each call
 * decided by the evaluator over it. It proves the entry is enough to build a Store that passes the contract.
 */
import {
  banKey,
  type Check,
  type CheckResult,
  evaluateChecks,
  type Lease,
  releaseLeases,
  renewLeases,
  type StateTable,
  type Store,
} from '@sluice/core/store';

interface Entry {
  readonly state: unknown;
  readonly expiresAt: number;
}

/** The evaluator's view of the Map during one call at `now` (states copied as JSON, as a remote store would). */
class MapTable implements StateTable {
  constructor(
    private readonly entries: Map<string, Entry>,
    private readonly now: number,
  ) {}

  get(rule: string, tag: string): unknown {
    const entry = this.entries.get(keyOf(rule, tag));
    return entry === undefined || entry.expiresAt <= this.now
      ? undefined
      : JSON.parse(JSON.stringify(entry.state));
  }

  set(rule: string, tag: string, state: unknown, expiresAt: number | undefined): void {
    const kept = expiresAt ?? this.entries.get(keyOf(rule, tag))?.expiresAt ?? this.now;
    this.entries.set(keyOf(rule, tag), { state: JSON.parse(JSON.stringify(state)), expiresAt: kept });
  }
}

/** Rule and tag in one Map key: a tag never holds a newline. */
function keyOf(rule: string, tag: string): string {
  return `${rule}\n${tag}`;
}

export class MapStore implements Store {
  readonly #entries = new Map<string, Entry>();

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return Promise.resolve(evaluateChecks(checks, now, new MapTable(this.#entries, now)));
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    releaseLeases(leases, now, new MapTable(this.#entries, now));
    return Promise.resolve();
  }

  renew(leases: readonly Lease[], now: number): Promise<void> {
    renewLeases(leases, now, new MapTable(this.#entries, now));
    return Promise.resolve();
  }

  unban(rule: string, tag: string): Promise<boolean> {
    const key = banKey(rule, tag);
    return Promise.resolve(this.#entries.delete(keyOf(key.rule, key.tag)));
  }

  close(): Promise<void> {
    this.#entries.clear();
    return Promise.resolve();
  }
}

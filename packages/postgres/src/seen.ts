import { keyOf, type LockedRow } from './rows.js';

/** A row as this process last wrote or read it, with the version that write left. */
export interface SeenRow extends LockedRow {
  /** The writing transaction's id (txid_current(): never reused, so a deleted and remade row never matches). */
  readonly version: number;
  /** The time the call that saw it decided at. */
  readonly at: number;
}

/** Rows remembered at most (a few MB): the keys seen lately stay, the oldest seen go first. */
const MAX_SEEN = 50_000;

/**
 * The rows this process last saw, and the database's clock as last read: what a batch of calls decides on
 * optimistically, in one round trip, before the database confirms no other process wrote those rows since. Never
 * trusted alone: a row whose version changed sends its calls down the locked path. Also which rows have a call
 * of this process under way (a batch or a locked call): a call on one of them waits for it.
 */
export class SeenRows {
  readonly #rows = new Map<string, SeenRow>();
  /** Calls of this process under way per row: a second one at once would find the version changed. */
  readonly #inFlight = new Map<string, number>();
  /** Database clock minus performance.now() at the latest answer: read later than the server read it, so low. */
  #clockOffset: number | undefined;

  /** Called each time the last call under way on some row ends: calls waiting for it may go. */
  readonly #onFree: () => void;

  constructor(onFree: () => void = () => {}) {
    this.#onFree = onFree;
  }

  /** The row seen under `keyOf(rule, tag)`, if any. */
  get(id: string): SeenRow | undefined {
    return this.#rows.get(id);
  }

  /** True while a call of this process is under way on the row. */
  busy(id: string): boolean {
    return this.#inFlight.has(id);
  }

  remember(row: SeenRow): void {
    const key = keyOf(row.rule, row.tag);
    this.#rows.delete(key); // re-inserted last: the Map's order is the eviction order
    this.#rows.set(key, row);
    if (this.#rows.size > MAX_SEEN) this.#rows.delete(this.#rows.keys().next().value as string);
  }

  /** Marks the rows (`keyOf(rule, tag)`) of a call under way until the returned function is called. */
  begin(ids: readonly string[]): () => void {
    for (const id of ids) this.#inFlight.set(id, (this.#inFlight.get(id) ?? 0) + 1);
    return () => {
      let freed = false;
      for (const id of ids) {
        const left = this.#inFlight.get(id)! - 1;
        if (left === 0) {
          this.#inFlight.delete(id);
          freed = true;
        } else this.#inFlight.set(id, left);
      }
      if (freed) this.#onFree();
    };
  }

  forget(id: string): void {
    this.#rows.delete(id);
  }

  /** The database's time as read in an answer that just arrived. */
  clockRead(databaseNow: number): void {
    this.#clockOffset = databaseNow - performance.now();
  }

  /** The database's time now, estimated from the latest read (a little behind it); undefined before any read. */
  clockEstimate(): number | undefined {
    return this.#clockOffset === undefined ? undefined : Math.floor(performance.now() + this.#clockOffset);
  }
}

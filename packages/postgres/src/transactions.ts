import {
  banKey,
  type Check,
  type CheckResult,
  evaluateChecks,
  type Lease,
  leaseStateKeys,
  releaseLeases,
  renewLeases,
  type StateKey,
  type StateTable,
  type Store,
  StoreError,
  stateKeys,
} from '@sluice/core/store';
import type { Pool, PoolClient } from 'pg';
import { MissingTableError, OutdatedTableError } from './errors.js';
import { keyOf, lockOrder, RowTable, type RowWrite } from './rows.js';
import type { TableName } from './schema.js';
import { SeenRows } from './seen.js';
import {
  commitRows,
  type Locked,
  lockRows,
  type PostgresClock,
  rollBack,
  type TransactionLimits,
  UNSEEN,
  type Written,
  writeIfUnchanged,
} from './transaction.js';

/** What {@link Transactions} needs: the pool, the table, the clock, the limits. */
export interface TransactionsOptions {
  readonly pool: Pool;
  readonly table: TableName;
  readonly clock: PostgresClock;
  readonly timeoutMs: number;
  readonly limits: TransactionLimits;
  /** Made once before the first call when the store creates its table; undefined otherwise. */
  readonly ready: () => Promise<void>;
}

/** PostgreSQL's code for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';
/** PostgreSQL's code for a column that does not exist (a table made before the version column). */
const UNDEFINED_COLUMN = '42703';
/** How far the database's clock may be behind the estimate a call decided at (ms rounding, clock drift). */
const CLOCK_SLACK_MS = 5;
/** How far past the estimate the one-round-trip write may run, at most (and at most half the time limit). */
const MAX_CLOCK_SPAN_MS = 50;

/**
 * The store under the resilience wrapper: each evaluate() or release() is ONE transaction on a connection of the
 * pool. When this process saw every row of the call last, ONE round trip: decided on those rows, written only if
 * none changed since (see writeIfUnchanged). Otherwise, or when that finds a row changed, two round trips (lock
 * and read; write and commit), deciding with the evaluator in between.
 */
export class Transactions implements Store {
  readonly #options: TransactionsOptions;
  readonly #seen = new SeenRows();
  /** The latest `now` a call ran at: the app clock's time for the expiry sweep. */
  #latestNow: number | undefined;

  constructor(options: TransactionsOptions) {
    this.#options = options;
  }

  get latestNow(): number | undefined {
    return this.#latestNow;
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return this.#transaction(stateKeys(checks), now, (at, table) => evaluateChecks(checks, at, table));
  }

  async release(leases: readonly Lease[], now: number): Promise<void> {
    await this.#transaction(leaseStateKeys(leases), now, (at, table) => releaseLeases(leases, at, table));
  }

  /** Extends the held concurrency leases (a long-lived connection's heartbeat): one transaction for all. */
  async renew(leases: readonly Lease[], now: number): Promise<void> {
    await this.#transaction(leaseStateKeys(leases), now, (at, table) => renewLeases(leases, at, table));
  }

  /** Lifts a key's ban under a rule (its violations and escalation level go too); true when it had one. */
  unban(rule: string, tag: string): Promise<boolean> {
    const key = banKey(rule, tag);
    // On the app clock, the latest `now` a call ran at: the engine's clock may not be this process's.
    return this.#transaction([key], this.#latestNow ?? Date.now(), (_at, table) => {
      const had = table.get(key.rule, key.tag) !== undefined;
      // Expired at once: the next call reads none, the sweep deletes the row.
      if (had) table.set(key.rule, key.tag, null, Number.NEGATIVE_INFINITY);
      return had;
    });
  }

  /** The pool is closed by the store that owns it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * One call's transaction: a connection, the rows locked, `decide` on them, the writes committed. Past the time
   * limit (the wrapper has answered the request by then) it rolls back instead: a late call counts nothing.
   */
  async #transaction<T>(
    keys: readonly StateKey[],
    now: number,
    decide: (at: number, table: StateTable) => T,
  ): Promise<T> {
    const { pool, table, timeoutMs } = this.#options;
    const deadline = Date.now() + timeoutMs;
    await this.#options.ready();
    const client = await pool.connect();
    let step = 'unlocked';
    try {
      if (Date.now() > deadline) throw late();
      const ordered = lockOrder(keys);
      const unlocked = await this.#unlocked(client, ordered, now, decide);
      if (unlocked !== undefined) {
        client.release();
        return unlocked.answer;
      }
      if (Date.now() > deadline) throw late();
      step = 'lock';
      const done = this.#seen.begin(ordered);
      try {
        return await this.#locked(client, ordered, now, decide, deadline, (next) => {
          step = next;
        });
      } finally {
        done();
      }
    } catch (error) {
      if (step === 'unlocked' && (error as StoreError).code === 'ERR_SLUICE_STORE_TIMEOUT') client.release();
      else await this.#giveBack(client, step, error);
      throw tableErrorOf(error, table.display);
    }
  }

  /**
   * The one-round-trip path: undefined (nothing written) when a row of the call was not seen by this process or
   * changed since, or before the database's clock was ever read; the locked path then takes the call.
   */
  async #unlocked<T>(
    client: PoolClient,
    keys: readonly StateKey[],
    now: number,
    decide: (at: number, table: StateTable) => T,
  ): Promise<{ answer: T } | undefined> {
    const seen = this.#seen.rowsOf(keys);
    const estimate = this.#seen.clockEstimate();
    if (seen === undefined || estimate === undefined) return undefined;
    const { clock, table, limits, timeoutMs } = this.#options;
    // Never before a time a seen row was decided at: the call's time does not go back for a key.
    const at = clock === 'database' ? Math.max(estimate, ...seen.map((row) => row.at)) : now;
    const rows = new RowTable(seen, at);
    const answer = decide(at, rows);
    const writes = rows.writes;
    const known = new Set(keys.map(({ rule, tag }) => keyOf(rule, tag)));
    if (!writes.every((row) => known.has(keyOf(row.rule, row.tag)))) return undefined;
    // Writing nothing, a row not seen would be left made (to be locked) for nothing: the locked path rolls back.
    if (writes.length === 0 && seen.length < keys.length) return undefined;
    const span = Math.min(MAX_CLOCK_SPAN_MS, timeoutMs / 2);
    const versions = new Map(seen.map((row) => [keyOf(row.rule, row.tag), row.version]));
    const expected = {
      rows: keys.map(({ rule, tag }) => ({ rule, tag, version: versions.get(keyOf(rule, tag)) ?? UNSEEN })),
      at,
      from: estimate - CLOCK_SLACK_MS,
      to: Math.floor(estimate + span),
    };
    const done = this.#seen.begin(keys);
    const result = await writeIfUnchanged(client, table, expected, writes, limits).finally(done);
    if (!result.ok) {
      this.#seen.forget(keys);
      return undefined;
    }
    this.#seen.clockRead(result.now);
    this.#rememberWrites(writes, result.written, at);
    this.#latestNow = Math.max(this.#latestNow ?? at, at);
    return { answer };
  }

  /** The locked path: two round trips, every row locked before the evaluator decides on it. */
  async #locked<T>(
    client: PoolClient,
    keys: readonly StateKey[],
    now: number,
    decide: (at: number, table: StateTable) => T,
    deadline: number,
    stepTo: (step: string) => void,
  ): Promise<T> {
    const { table, clock, limits } = this.#options;
    const locked = await lockRows(client, table, keys, limits);
    this.#seen.clockRead(locked.now);
    const at = clock === 'database' ? locked.now : now;
    const rows = new RowTable(locked.rows, at);
    stepTo('decide');
    const answer = decide(at, rows);
    stepTo('commit');
    if (Date.now() > deadline) {
      await rollBack(client, limits);
      stepTo('rolled back');
      throw late();
    }
    const written = await commitRows(client, table, rows.writes, limits);
    this.#rememberLocked(locked, rows.writes, written, at);
    this.#latestNow = Math.max(this.#latestNow ?? at, at);
    client.release();
    return answer;
  }

  /** Rows a call wrote, with the versions the database gave them: what the next call may decide on. */
  #rememberWrites(writes: readonly RowWrite[], written: readonly Written[], at: number): void {
    const versions = new Map(written.map((row) => [keyOf(row.rule, row.tag), row.version]));
    for (const row of writes) {
      const version = versions.get(keyOf(row.rule, row.tag));
      if (version !== undefined) this.#seen.remember({ ...row, version, at });
    }
  }

  /**
   * After the locked path: its writes, and the rows it read and left as they were. Not a row made only to be
   * locked (version 0): it is gone after a rollback, and an old table's rows all start at 0.
   */
  #rememberLocked(
    locked: Locked,
    writes: readonly RowWrite[],
    written: readonly Written[],
    at: number,
  ): void {
    const wrote = new Set(writes.map((row) => keyOf(row.rule, row.tag)));
    for (const row of locked.rows) {
      if (!wrote.has(keyOf(row.rule, row.tag)) && row.version !== 0) this.#seen.remember({ ...row, at });
    }
    this.#rememberWrites(writes, written, at);
  }

  /**
   * Gives a failed call's connection back: after the evaluator threw (the database is fine) rolled back and kept,
   * after anything else dropped (its state in the middle of a transaction is unknown).
   */
  async #giveBack(client: PoolClient, step: string, error: unknown): Promise<void> {
    if (step === 'rolled back') {
      client.release();
      return;
    }
    if (step === 'decide') {
      try {
        await rollBack(client, this.#options.limits);
        client.release();
        return;
      } catch {}
    }
    client.release(error instanceof Error ? error : true);
  }
}

/** A missing table or column named with the step that makes it; any other error as it was. */
function tableErrorOf(error: unknown, table: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === UNDEFINED_TABLE) return new MissingTableError(table);
  if (code === UNDEFINED_COLUMN) return new OutdatedTableError(table);
  return error;
}

function late(): StoreError {
  return new StoreError('ERR_SLUICE_STORE_TIMEOUT', 'PostgreSQL call past its time limit: rolled back');
}

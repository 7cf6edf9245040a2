import { type Check, type CheckResult, type Lease, type Store, StoreError } from '@sluice/core/store';
import type { Pool, PoolClient } from 'pg';
import { MissingTableError } from './errors.js';
import {
  banKey,
  evaluateChecks,
  leaseStateKeys,
  releaseLeases,
  renewLeases,
  type StateKey,
  type StateTable,
  stateKeys,
} from './evaluator.js';
import { RowTable } from './rows.js';
import type { TableName } from './schema.js';
import { commitRows, lockRows, type PostgresClock, rollBack, type TransactionLimits } from './transaction.js';

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

/**
 * The store under the resilience wrapper: each evaluate() or release() is ONE transaction of two round trips
 * (lock and read; write and commit) on a connection of the pool, deciding with the evaluator in between.
 */
export class Transactions implements Store {
  readonly #options: TransactionsOptions;
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
    const { pool, table, clock, timeoutMs, limits } = this.#options;
    const deadline = Date.now() + timeoutMs;
    await this.#options.ready();
    const client = await pool.connect();
    if (Date.now() > deadline) {
      client.release();
      throw late();
    }
    let step = 'lock';
    try {
      const locked = await lockRows(client, table, keys, clock, limits);
      const at = clock === 'database' ? locked.now : now;
      const rows = new RowTable(locked.rows, at);
      step = 'decide';
      const answer = decide(at, rows);
      step = 'commit';
      if (Date.now() > deadline) {
        await rollBack(client, limits);
        step = 'rolled back';
        throw late();
      }
      await commitRows(client, table, rows.writes, limits);
      this.#latestNow = Math.max(this.#latestNow ?? at, at);
      client.release();
      return answer;
    } catch (error) {
      await this.#giveBack(client, step, error);
      throw (error as { code?: unknown }).code === UNDEFINED_TABLE
        ? new MissingTableError(table.display)
        : error;
    }
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

function late(): StoreError {
  return new StoreError('ERR_SLUICE_STORE_TIMEOUT', 'PostgreSQL call past its time limit: rolled back');
}

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
import { BatchStatement } from './batch.js';
import { checkout } from './checkout.js';
import { type Call, Coalescer } from './coalescer.js';
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
  type Written,
} from './transaction.js';

/** What {@link Transactions} needs: the pool, the table, the clock, the limits. */
export interface TransactionsOptions {
  readonly pool: Pool;
  readonly table: TableName;
  readonly clock: PostgresClock;
  /** The time limit of a call sent now (it moves: see PendingCalls). */
  readonly timeoutMs: () => number;
  readonly limits: TransactionLimits;
  /** Awaited before a call while the store is creating its table; undefined once made, or not to be made. */
  readonly ready: () => Promise<void> | undefined;
}

/** PostgreSQL's code for a relation that does not exist. */
const UNDEFINED_TABLE = '42P01';
/** PostgreSQL's code for a column that does not exist (a table made before the version column). */
const UNDEFINED_COLUMN = '42703';

/**
 * The store under the resilience wrapper. The calls of one event-loop turn go in ONE statement, ONE transaction
 * (see Coalescer): decided on the rows this process saw last, written only if none changed since. A call the
 * batch cannot take, or whose row changed, takes the locked path: its own transaction of two round trips (lock
 * and read; write and commit), deciding with the evaluator in between.
 */
export class Transactions implements Store {
  readonly #options: TransactionsOptions;
  readonly #seen = new SeenRows(() => this.#coalescer.wake());
  readonly #coalescer: Coalescer;
  /** The latest `now` a call ran at: the app clock's time for the expiry sweep. */
  #latestNow: number | undefined;

  constructor(options: TransactionsOptions) {
    this.#options = options;
    this.#coalescer = new Coalescer({
      pool: options.pool,
      seen: this.#seen,
      statement: new BatchStatement(options.table),
      clock: options.clock,
      limits: options.limits,
      locked: (call) => this.#lockedCall(call),
      decidedAt: (at) => {
        this.#latestNow = Math.max(this.#latestNow ?? at, at);
      },
      errorOf: (error) => tableErrorOf(error, options.table.display),
      late,
    });
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
  renew(leases: readonly Lease[], now: number): Promise<number> {
    return this.#transaction(leaseStateKeys(leases), now, (at, table) => renewLeases(leases, at, table));
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
   * One call: in a batch of the calls of this turn (one round trip, one transaction for them all) when the
   * database's clock has been read, else on the locked path. Past the time limit (the wrapper has answered the
   * request by then) it counts nothing.
   */
  #transaction<T>(
    keys: readonly StateKey[],
    now: number,
    decide: (at: number, table: StateTable) => T,
  ): Promise<T> {
    const deadline = Date.now() + this.#options.timeoutMs();
    const ready = this.#options.ready();
    const ordered = lockOrder(keys);
    // The table made (or not to be made): straight into the queue, no promise hop.
    if (ready === undefined) return this.#enqueue(ordered, now, deadline, decide);
    return ready.then(() => this.#enqueue(ordered, now, deadline, decide));
  }

  #enqueue<T>(
    ordered: readonly StateKey[],
    now: number,
    deadline: number,
    decide: (at: number, table: StateTable) => T,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call: Call = {
        keys: ordered,
        ids: ordered.map(({ rule, tag }) => keyOf(rule, tag)),
        now,
        deadline,
        decide,
        retried: false,
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      if (this.#seen.clockEstimate() === undefined) this.#lockedCall(call);
      else this.#coalescer.add(call);
    });
  }

  /** A call on the locked path, its rows marked under way (batches on them wait) from now until it ends. */
  #lockedCall(call: Call): void {
    const done = this.#seen.begin(call.ids);
    this.#lockedTransaction(call).then(call.resolve, call.reject).finally(done);
  }

  async #lockedTransaction(call: Call): Promise<unknown> {
    const client = await checkout(this.#options.pool);
    if (Date.now() > call.deadline) {
      client.release(); // unused: nothing sent
      throw late();
    }
    let step = 'lock';
    try {
      return await this.#locked(client, call.keys, call.now, call.decide, call.deadline, (next) => {
        step = next;
      });
    } catch (error) {
      await this.#giveBack(client, step, error);
      throw tableErrorOf(error, this.#options.table.display);
    }
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
    const versions = new Map(written.map((row) => [keyOf(row.rule, row.tag), row.version]));
    for (const row of writes) {
      const version = versions.get(keyOf(row.rule, row.tag));
      if (version !== undefined) this.#seen.remember({ ...row, version, at });
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

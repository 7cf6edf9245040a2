import type { StateKey, StateTable } from '@sluice/core/store';
import type { Pool, PoolClient } from 'pg';
import { type BatchOutcome, type BatchRow, type BatchStatement, UNSEEN } from './batch.js';
import { checkout } from './checkout.js';
import { keyOf, type LockedRow, lockOrder, RowTable } from './rows.js';
import type { SeenRows } from './seen.js';
import type { PostgresClock, TransactionLimits } from './transaction.js';

/** One store call (evaluate, release, renew, unban) waiting to go in a batch. */
export interface Call {
  /** Its rows, each once, in lock order, and their `keyOf` ids. */
  readonly keys: readonly StateKey[];
  readonly ids: readonly string[];
  readonly now: number;
  /** Date.now() past which it counts nothing (the wrapper has answered it). */
  readonly deadline: number;
  readonly decide: (at: number, table: StateTable) => unknown;
  /** Set once a batch it was in failed on another call's row: the next failure sends it down the locked path. */
  retried: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What the coalescer needs of the store. */
export interface CoalescerHost {
  readonly pool: Pool;
  readonly seen: SeenRows;
  readonly statement: BatchStatement;
  readonly clock: PostgresClock;
  readonly limits: TransactionLimits;
  /** The locked path (two round trips, rows locked across the decision), for a call a batch cannot take. */
  locked(call: Call): void;
  /** A batch's rows were kept at this time. */
  decidedAt(at: number): void;
  /** The error a call gets when its batch failed (a missing table named, say). */
  errorOf(error: unknown): unknown;
  late(): Error;
}

/** Calls and rows per batch at most: the statement's arrays stay small, a batch's lock waits short. */
const MAX_CALLS = 128;
const MAX_ROWS = 512;
/** How far the database's clock may be behind the estimate a batch decided at (ms rounding, clock drift). */
const CLOCK_SLACK_MS = 5;

/** A row as a batch's calls leave it in turn: what the next call reads, and what the database must still hold. */
interface Entry {
  readonly key: StateKey;
  /** What the database must hold for the batch to be kept: the version seen, or {@link UNSEEN}. */
  readonly seen: number;
  /** The row as the calls so far leave it (undefined: nothing). */
  current: LockedRow | undefined;
  /** When `current` was decided (a call's time does not go back for a key). */
  at: number;
  /** The earliest time a call read it unseen, before any call wrote it: it must hold nothing live then. */
  readAt: number;
  written: boolean;
}

/** A batch decided: its rows for the statement, and each call with its answer. */
interface Plan {
  readonly rows: BatchRow[];
  readonly entries: Map<string, Entry>;
  readonly decided: { call: Call; answer: unknown }[];
  /** Calls the batch cannot take (writes outside their rows, or a row not seen they only read). */
  readonly locked: Call[];
}

/**
 * Coalesces the calls of one event-loop turn into ONE statement, ONE transaction: each call is decided in turn
 * by core's evaluator on the rows this process saw last (a row two calls share: the second reads what the first
 * left), and the statement writes the rows only if none changed since. A call on a row a batch or a locked call
 * of this process has under way waits for it (it would only find the row changed); calls on other rows go in a
 * batch of their own at once. A batch that meets a changed row keeps nothing: the calls on that row take the
 * locked path, the others go again in the next batch (once; then the locked path too).
 */
export class Coalescer {
  readonly #host: CoalescerHost;
  #pending: Call[] = [];
  #scheduled = false;
  readonly #flush = () => this.#formBatches();

  constructor(host: CoalescerHost) {
    this.#host = host;
  }

  add(call: Call): void {
    this.#pending.push(call);
    this.wake();
  }

  /** Forms batches at the end of this turn (the calls of the same turn go together). */
  wake(): void {
    if (this.#scheduled || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(this.#flush);
  }

  /** Takes every waiting call whose rows are free, up to the batch limits; the rest wait for their rows. */
  #formBatches(): void {
    this.#scheduled = false;
    const { seen, late } = this.#host;
    const now = Date.now();
    const batch: Call[] = [];
    const waiting: Call[] = [];
    // Rows of calls left waiting: a later call on one waits too, so calls on one row keep their order.
    const held = new Set<string>();
    let rows = 0;
    for (const call of this.#pending) {
      if (now > call.deadline) {
        call.reject(late());
        continue;
      }
      const free =
        batch.length < MAX_CALLS &&
        rows + call.ids.length <= MAX_ROWS &&
        call.ids.every((id) => !held.has(id) && !seen.busy(id));
      if (free) {
        batch.push(call);
        rows += call.ids.length;
      } else {
        waiting.push(call);
        for (const id of call.ids) held.add(id);
      }
    }
    this.#pending = waiting;
    if (batch.length > 0) {
      void this.#send(batch);
      // Calls cut off by the limits alone (their rows free) go in another batch at once.
      this.wake();
    }
  }

  async #send(calls: Call[]): Promise<void> {
    const { seen, pool } = this.#host;
    const ids = new Set<string>();
    for (const call of calls) for (const id of call.ids) ids.add(id);
    const done = seen.begin([...ids]);
    let client: PoolClient;
    try {
      client = await checkout(pool);
    } catch (error) {
      done();
      for (const call of calls) call.reject(this.#host.errorOf(error));
      return;
    }
    const later: Call[] = [];
    try {
      await this.#run(client, calls, later);
    } finally {
      done();
      for (const call of later) this.#host.locked(call);
    }
  }

  /** Decides the live calls, sends their rows, settles them; calls for the locked path go to `later`. */
  async #run(client: PoolClient, calls: Call[], later: Call[]): Promise<void> {
    const host = this.#host;
    const now = Date.now();
    const live = calls.filter((call) => {
      if (now <= call.deadline) return true;
      call.reject(host.late());
      return false;
    });
    const estimate = host.seen.clockEstimate();
    if (live.length === 0 || estimate === undefined) {
      client.release();
      later.push(...live);
      return;
    }
    const plan = this.#decide(live, estimate);
    later.push(...plan.locked);
    if (plan.decided.length === 0 || plan.rows.length === 0) {
      client.release();
      for (const { call, answer } of plan.decided) call.resolve(answer);
      return;
    }
    let outcome: BatchOutcome;
    try {
      // Kept only if written before the first of the calls' time limits: a late call counts nothing.
      let first = Number.POSITIVE_INFINITY;
      for (const { call } of plan.decided) first = Math.min(first, call.deadline);
      const span = {
        from: estimate - CLOCK_SLACK_MS,
        to: Math.floor(estimate + Math.max(0, first - Date.now())),
      };
      outcome = await host.statement.send(client, plan.rows, span, host.limits);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      for (const { call } of plan.decided) call.reject(host.errorOf(error));
      return;
    }
    if (outcome.ok) this.#kept(plan, outcome.now, outcome.version);
    else this.#notKept(plan, outcome, later);
  }

  /** Every call decided in turn on the rows as the calls before it left them. */
  #decide(calls: readonly Call[], estimate: number): Plan {
    const { seen, clock } = this.#host;
    const entries = new Map<string, Entry>();
    const decided: Plan['decided'] = [];
    const locked: Call[] = [];
    for (const call of calls) {
      const rows: LockedRow[] = [];
      let at = estimate;
      let unseen = false;
      for (let i = 0; i < call.ids.length; i++) {
        const id = call.ids[i]!;
        const entry = entries.get(id);
        if (entry !== undefined) {
          if (entry.current !== undefined) rows.push(entry.current);
          at = Math.max(at, entry.at);
          unseen ||= entry.seen === UNSEEN && !entry.written;
          continue;
        }
        const row = seen.get(id);
        if (row !== undefined) {
          rows.push(row);
          at = Math.max(at, row.at);
        } else unseen = true;
      }
      if (clock === 'app') at = call.now;
      const table = new RowTable(rows, at);
      let answer: unknown;
      try {
        answer = call.decide(at, table);
      } catch (error) {
        call.reject(error); // the evaluator threw: this call writes nothing, the others go on
        continue;
      }
      const writes = table.writes;
      const own = writes.every((row) => call.ids.includes(keyOf(row.rule, row.tag)));
      // Writing nothing, a row not seen would be left made (to be locked) for nothing: the locked path rolls back.
      if (!own || (writes.length === 0 && unseen)) {
        locked.push(call);
        continue;
      }
      for (let i = 0; i < call.ids.length; i++) {
        const id = call.ids[i]!;
        let entry = entries.get(id);
        if (entry === undefined) {
          const row = seen.get(id);
          entry = {
            key: call.keys[i]!,
            seen: row?.version ?? UNSEEN,
            current: row,
            at: row?.at ?? at,
            readAt: at,
            written: false,
          };
          entries.set(id, entry);
        } else if (!entry.written) entry.readAt = Math.min(entry.readAt, at);
      }
      for (const row of writes) {
        const entry = entries.get(keyOf(row.rule, row.tag))!;
        entry.current = row;
        entry.at = at;
        entry.written = true;
      }
      decided.push({ call, answer });
    }
    return { rows: this.#rowsOf(entries), entries, decided, locked };
  }

  /** The batch's rows in lock order: a write where a call wrote, else a lock only. */
  #rowsOf(entries: Map<string, Entry>): BatchRow[] {
    return lockOrder([...entries.values()].map((entry) => entry.key)).map(({ rule, tag }) => {
      const entry = entries.get(keyOf(rule, tag))!;
      const written = entry.written ? entry.current! : undefined;
      return {
        rule,
        tag,
        seen: entry.seen,
        at: entry.readAt,
        state: written === undefined ? null : JSON.stringify(written.state),
        expiresAt: written?.expiresAt ?? Number.NEGATIVE_INFINITY,
      };
    });
  }

  /** Kept: the rows written are remembered with their new version, every call answered. */
  #kept(plan: Plan, now: number, version: number): void {
    const { seen } = this.#host;
    seen.clockRead(now);
    let latest = Number.NEGATIVE_INFINITY;
    for (const entry of plan.entries.values()) {
      if (!entry.written) continue;
      const { rule, tag, state, expiresAt } = entry.current!;
      seen.remember({ rule, tag, state, expiresAt, version, at: entry.at });
      latest = Math.max(latest, entry.at);
    }
    if (latest > Number.NEGATIVE_INFINITY) this.#host.decidedAt(latest);
    for (const { call, answer } of plan.decided) call.resolve(answer);
  }

  /**
   * Nothing kept. Rows changed: they are forgotten, the calls on them take the locked path, the others go again.
   * The clock off (the statement ran past a call's time limit, or the estimate was off): every call goes again,
   * decided anew (a late one is then refused). A call that goes again a second time takes the locked path.
   */
  #notKept(plan: Plan, outcome: Extract<BatchOutcome, { ok: false }>, later: Call[]): void {
    const changed = new Set<string>();
    if (outcome.changed === 'all') for (const row of plan.rows) changed.add(keyOf(row.rule, row.tag));
    else
      for (const n of outcome.changed) {
        const row = plan.rows[n];
        if (row !== undefined) changed.add(keyOf(row.rule, row.tag));
      }
    for (const id of changed) this.#host.seen.forget(id);
    const again: Call[] = [];
    for (const { call } of plan.decided) {
      if (call.retried || call.ids.some((id) => changed.has(id))) later.push(call);
      else {
        call.retried = true;
        again.push(call);
      }
    }
    // First in line: they waited longest.
    this.#pending = [...again, ...this.#pending];
  }
}

import type { PoolClient, QueryResult } from 'pg';
import type { TableName } from './schema.js';
import { DATABASE_NOW_MS, type TransactionLimits } from './transaction.js';

/** A version no write leaves: what a batch expects of a row it has not seen (absent, expired, or made to be locked). */
export const UNSEEN = -1;

/** One row of a batch, in lock order: what the batch expects of it, and what it writes (or only locks). */
export interface BatchRow {
  readonly rule: string;
  readonly tag: string;
  /** The version seen; {@link UNSEEN}: the row must hold nothing live at `at`. */
  readonly seen: number;
  /** The time the first call reading it decided at (an unseen row must be expired by then). */
  readonly at: number;
  /** The state written, as JSON text; null: the row is only locked (read by a call, written by none). */
  readonly state: string | null;
  readonly expiresAt: number;
}

/** The database's time, epoch ms, must be in [from, to] once the rows are written, else nothing is kept. */
export interface ClockSpan {
  readonly from: number;
  readonly to: number;
}

/** A batch's answer: kept (every row as expected), or nothing kept and why. */
export type BatchOutcome =
  | { readonly ok: true; readonly now: number; readonly version: number }
  | { readonly ok: false; readonly clock: boolean; readonly changed: readonly number[] | 'all' };

/** SQLSTATE of the cast the guard fails on purpose (invalid_text_representation), with its marker. */
const GUARD_CODE = '22P02';
const GUARD_MARK = 'sluice_row_changed';
const CLOCK_MARK = 'clock';

/**
 * The batch statement of a table: ONE statement, ONE implicit transaction, whatever the rows, so its text never
 * changes and PostgreSQL parses and plans it once per connection (a named prepared statement). The rows come as
 * arrays (unnest), in lock order: each is upserted, locking it (waiting for a row another call is making),
 * written only where it still has the version seen (or, unseen, holds nothing live), a row only read is locked
 * and left as it is. Then the statement fails on purpose, so nothing is kept, unless every row matched and the
 * database's clock, read after the last lock, is in the span; the failure names the rows that did not match
 * (their 1-based positions) or the clock. `set_config` in the row source sets the lock time limit before the
 * first row is locked.
 */
function batchSql(table: TableName): string {
  return `WITH i AS MATERIALIZED (
  SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::float8[], $6::float8[])
    WITH ORDINALITY AS i(rule, tag, seen, state, expires_at, at, n)
  WHERE set_config('lock_timeout', $7::text, true) IS NOT NULL),
up AS (INSERT INTO ${table.qualified} AS c (rule, tag, state, expires_at, version)
  SELECT rule, tag, state::jsonb, expires_at, CASE WHEN state IS NULL THEN 0 ELSE txid_current() END
  FROM i ORDER BY n
  ON CONFLICT (rule, tag) DO UPDATE SET
    state = CASE WHEN EXCLUDED.version = 0 THEN c.state ELSE EXCLUDED.state END,
    expires_at = CASE WHEN EXCLUDED.version = 0 THEN c.expires_at ELSE EXCLUDED.expires_at END,
    version = CASE WHEN EXCLUDED.version = 0 THEN c.version ELSE EXCLUDED.version END
  WHERE (SELECT CASE WHEN i.seen = ${UNSEEN} THEN c.state IS NULL OR c.expires_at <= i.at
    ELSE c.version = i.seen END FROM i WHERE i.rule = c.rule AND i.tag = c.tag)
  RETURNING c.rule, c.tag),
done AS (SELECT count(*) AS n, ${DATABASE_NOW_MS} AS now FROM up)
SELECT done.now, txid_current() AS version,
  CASE WHEN done.n = cardinality($1::text[]) AND done.now BETWEEN $8::float8 AND $9::float8 THEN 0
  ELSE ('${GUARD_MARK} ' || CASE WHEN done.n = cardinality($1::text[]) THEN '${CLOCK_MARK}' ELSE
    coalesce((SELECT string_agg(i.n::text, ',') FROM i WHERE NOT EXISTS
      (SELECT 1 FROM up WHERE up.rule = i.rule AND up.tag = i.tag)), 'all') END)::int END AS guard
FROM done`;
}

/** The statement's name on each connection: one per table (pg refuses one name for two texts). */
function statementName(table: TableName): string {
  let hash = 0x811c9dc5; // FNV-1a of the qualified name: short, stable, per table
  for (let i = 0; i < table.qualified.length; i++) {
    hash = Math.imul(hash ^ table.qualified.charCodeAt(i), 0x01000193) >>> 0;
  }
  return `sluice_batch_${hash.toString(36)}`;
}

/** The prepared statement of one table, and how to send a batch through it. */
export class BatchStatement {
  readonly #text: string;
  readonly #name: string;

  constructor(table: TableName) {
    this.#text = batchSql(table);
    this.#name = statementName(table);
  }

  /** Sends the rows (lock order, each once) in ONE round trip; answers whether they were kept. */
  async send(
    client: PoolClient,
    rows: readonly BatchRow[],
    span: ClockSpan,
    limits: TransactionLimits,
  ): Promise<BatchOutcome> {
    const n = rows.length;
    const rules = new Array<string>(n);
    const tags = new Array<string>(n);
    const seen = new Array<number>(n);
    const states = new Array<string | null>(n);
    const expiries = new Array<number>(n);
    const ats = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const row = rows[i]!;
      if (Number.isNaN(row.expiresAt)) throw new RangeError('a row expiry is NaN');
      rules[i] = row.rule;
      tags[i] = row.tag;
      seen[i] = row.seen;
      states[i] = row.state;
      // A row only locked is proposed expired at once: made by this statement, it holds nothing.
      expiries[i] = row.state === null ? Number.NEGATIVE_INFINITY : row.expiresAt;
      ats[i] = row.at;
    }
    const values = [
      rules,
      tags,
      seen,
      states,
      expiries,
      ats,
      String(Math.ceil(limits.lockTimeoutMs)),
      span.from,
      span.to,
    ];
    let result: QueryResult;
    try {
      // query_timeout per query is read by pg (client.js) though its typings leave it out.
      result = await client.query({
        name: this.#name,
        text: this.#text,
        values,
        query_timeout: limits.abandonAfterMs,
      } as { name: string; text: string; values: unknown[] });
    } catch (error) {
      const failed = guardFailure(error);
      if (failed !== undefined) return failed;
      throw error;
    }
    const row = result.rows[0] as { now: number; version: string };
    return { ok: true, now: row.now, version: Number(row.version) };
  }
}

/** The guard's failure, read from its message (the rows that did not match, or the clock); undefined if another error. */
function guardFailure(error: unknown): BatchOutcome | undefined {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== GUARD_CODE || typeof message !== 'string') return undefined;
  const at = message.indexOf(GUARD_MARK);
  if (at < 0) return undefined;
  const detail = message.slice(at + GUARD_MARK.length).replace(/["\s]/g, '');
  if (detail === CLOCK_MARK) return { ok: false, clock: true, changed: [] };
  // 'all' (never expected: a row short but none named) and anything unreadable: every row counts as changed.
  const changed = detail.split(',').map((n) => Number(n) - 1);
  return { ok: false, clock: false, changed: changed.every(Number.isInteger) ? changed : 'all' };
}

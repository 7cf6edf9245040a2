import type { Pool } from 'pg';
import type { TableName } from './schema.js';
import { DATABASE_NOW_MS } from './transaction.js';

/** Options of the expiry sweep. */
export interface SweepOptions {
  /** Rows deleted per statement at most. */
  readonly batch: number;
  /** Statements per sweep at most: a sweep deletes at most batch x batches rows, then waits for the next. */
  readonly batches: number;
}

/**
 * Deletes up to `batch` expired rows in one short statement: rows another call holds are skipped (SKIP LOCKED),
 * never waited for, so the sweep never stalls a request. `now` (app clock) or the database's clock says what
 * has expired. Answers the rows deleted.
 */
async function sweepBatch(
  pool: Pool,
  table: TableName,
  now: number | undefined,
  batch: number,
): Promise<number> {
  const result = await pool.query(
    `DELETE FROM ${table.qualified} WHERE ctid IN (
  SELECT ctid FROM ${table.qualified} WHERE expires_at < COALESCE($1::float8, ${DATABASE_NOW_MS})
  LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now ?? null, batch],
  );
  return result.rowCount ?? 0;
}

/** Deletes expired rows in bounded batches until a batch finds fewer than it may take; answers the rows deleted. */
export async function sweepExpired(
  pool: Pool,
  table: TableName,
  now: number | undefined,
  options: SweepOptions,
): Promise<number> {
  let deleted = 0;
  for (let n = 0; n < options.batches; n++) {
    const batch = await sweepBatch(pool, table, now, options.batch);
    deleted += batch;
    if (batch < options.batch) break;
  }
  return deleted;
}

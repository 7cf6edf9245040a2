import type { StateKey } from '@sluice/core/store';
import type { PoolClient, QueryConfig, QueryResult } from 'pg';
import { type LockedRow, lockOrder, type RowWrite } from './rows.js';
import type { TableName } from './schema.js';

/** Where a call's time comes from: the database's clock (one for every gateway) or the `now` the engine passes. */
export type PostgresClock = 'database' | 'app';

/** The database's time, epoch ms, read when the statement runs (not when the transaction began). */
export const DATABASE_NOW_MS = 'floor(extract(epoch FROM clock_timestamp()) * 1000)::float8';

/** How long one transaction may wait for locks, and stay idle between the locked path's two round trips, at most. */
export interface TransactionLimits {
  /** Past it a lock wait fails instead of queuing behind a stuck holder. */
  readonly lockTimeoutMs: number;
  /** Past it the server ends a transaction whose gateway went quiet (its locks go with it). */
  readonly idleTimeoutMs: number;
  /** A round trip not answered in this long is abandoned and its connection dropped. */
  readonly abandonAfterMs: number;
}

/** A row as locked, with the version its latest write left (0: made only to be locked, or written before versions). */
export interface VersionedRow extends LockedRow {
  readonly version: number;
}

/** Rows locked at the start of a call, with the database's time (read after every lock). */
export interface Locked {
  readonly rows: readonly VersionedRow[];
  readonly now: number;
}

/** A row a call wrote, and the version it now has. */
export interface Written {
  readonly rule: string;
  readonly tag: string;
  readonly version: number;
}

interface RawRow {
  readonly rule: string;
  readonly tag: string;
  readonly state: unknown;
  readonly expires_at: number;
  readonly version: string;
}

/** A write's version: the writing transaction's 64-bit id, never reused (a remade row never matches an old one). */
const NEW_VERSION = 'txid_current()';

/** One round trip: a simple-protocol query (several statements, no parameters), with the abandon limit. */
async function roundTrip(
  client: PoolClient,
  text: string,
  limits: TransactionLimits,
): Promise<QueryResult[]> {
  // query_timeout per query is read by pg (client.js) though its typings leave it out.
  const config: QueryConfig & { query_timeout: number } = { text, query_timeout: limits.abandonAfterMs };
  const result: QueryResult | QueryResult[] = await client.query(config);
  // A query of several statements answers one result per statement.
  return Array.isArray(result) ? (result as QueryResult[]) : [result];
}

function numberLiteral(value: number): string {
  if (Number.isNaN(value)) throw new RangeError('a row expiry is NaN');
  return Number.isFinite(value) ? String(value) : `'${value > 0 ? '' : '-'}Infinity'::float8`;
}

/**
 * Round trip 1: opens the transaction (read committed: each statement sees the latest committed rows, and
 * row locks make the call exact), makes the rows that do not exist yet (expired at once, so a call that ends
 * up writing none leaves nothing behind, and the sweep takes any left) and locks every row, in one order, in ONE
 * statement (INSERT ... ON CONFLICT DO UPDATE locks the rows it finds, and waits for a row another call is
 * making), returning them with the database's clock, read as each row is locked (the call takes the latest).
 */
export async function lockRows(
  client: PoolClient,
  table: TableName,
  keys: readonly StateKey[],
  limits: TransactionLimits,
): Promise<Locked> {
  const values = lockOrder(keys)
    .map(
      ({ rule, tag }) => `(${client.escapeLiteral(rule)},${client.escapeLiteral(tag)},'-Infinity'::float8)`,
    )
    .join(',');
  // The clock is read in RETURNING, row by row as each is locked: the latest of them is read after every lock.
  // Read on the app clock too: it dates the one-round-trip path's writes (see writeIfUnchanged).
  const clockColumn = `, ${DATABASE_NOW_MS} AS now`;
  const statements = [
    'BEGIN ISOLATION LEVEL READ COMMITTED',
    // One statement for both settings (set_config's `true`: as SET LOCAL, for this transaction only).
    `SELECT set_config('lock_timeout', '${Math.ceil(limits.lockTimeoutMs)}', true), ` +
      `set_config('idle_in_transaction_session_timeout', '${Math.ceil(limits.idleTimeoutMs)}', true)`,
    `INSERT INTO ${table.qualified} AS c (rule, tag, expires_at) VALUES ${values}
ON CONFLICT (rule, tag) DO UPDATE SET state = c.state
RETURNING c.rule, c.tag, c.state, c.expires_at, c.version${clockColumn}`,
  ];
  const results = await roundTrip(client, statements.join(';\n'), limits);
  const locked = results[2]!.rows as (RawRow & { now: number })[];
  const rows = locked.map((row) => ({
    rule: row.rule,
    tag: row.tag,
    state: row.state,
    expiresAt: row.expires_at,
    version: Number(row.version),
  }));
  return { rows, now: Math.max(...locked.map((row) => row.now)) };
}

/**
 * Round trip 2: writes the call's rows back and commits, in ONE round trip; with nothing to write, rolls back
 * (the rows made only to be locked go with it).
 */
export async function commitRows(
  client: PoolClient,
  table: TableName,
  writes: readonly RowWrite[],
  limits: TransactionLimits,
): Promise<Written[]> {
  if (writes.length === 0) {
    await roundTrip(client, 'ROLLBACK', limits);
    return [];
  }
  const upsert = `INSERT INTO ${table.qualified} AS c (rule, tag, state, expires_at, version)
VALUES ${writeValues(client, writes, `,${NEW_VERSION}`)}
ON CONFLICT (rule, tag) DO UPDATE SET state = EXCLUDED.state, expires_at = EXCLUDED.expires_at, version = EXCLUDED.version
RETURNING c.rule, c.tag, c.version`;
  const results = await roundTrip(client, `${upsert};\nCOMMIT`, limits);
  return (results[0]!.rows as RawRow[]).map(({ rule, tag, version }) => ({
    rule,
    tag,
    version: Number(version),
  }));
}

function writeValues(client: PoolClient, writes: readonly RowWrite[], extra = ''): string {
  return writes
    .map(
      (row) =>
        `(${client.escapeLiteral(row.rule)},${client.escapeLiteral(row.tag)},` +
        `${client.escapeLiteral(JSON.stringify(row.state))}::jsonb,${numberLiteral(row.expiresAt)}::float8${extra})`,
    )
    .join(',');
}

/** Ends a transaction the call gave up on (its time limit passed): nothing it decided is kept. */
export async function rollBack(client: PoolClient, limits: TransactionLimits): Promise<void> {
  await roundTrip(client, 'ROLLBACK', limits);
}

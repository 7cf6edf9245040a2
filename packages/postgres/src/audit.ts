import {
  type AuditEntry,
  type AuditLog,
  type AuditQuery,
  type AuditRecord,
  auditEntryOf,
  checkAuditQuery,
  DEFAULT_AUDIT_READ,
  withTimeout,
} from '@sluice/core/store';
import type pg from 'pg';
import type { TableName } from './schema.js';

/** The audit table beside the counters: `<prefix>audit` in the same schema, and its index on the time. */
export interface AuditTable {
  readonly qualified: string;
  readonly timeIndex: string;
}

const COUNTERS = 'counters"';

/** The audit table of a store's table (`public.sluice_counters` -> `public.sluice_audit`): its prefix, checked. */
export function auditTableOf(table: TableName): AuditTable {
  // The counters' name was validated (letters, digits, underscores, short enough); `audit` is shorter.
  const prefixed = table.qualified.slice(0, -COUNTERS.length);
  const index = prefixed.slice(prefixed.lastIndexOf('"'));
  return { qualified: `${prefixed}audit"`, timeIndex: `${index}audit_at"` };
}

/**
 * The statements that create the audit table, each idempotent; run with the counters' (migrate, createTable).
 * Append-only: the gateways need INSERT and SELECT on it (and USAGE on its id sequence), never UPDATE or DELETE.
 * `details` is json, not jsonb: kept as written, its fields in the order the listing shows them.
 */
export function createAuditTableSql(table: AuditTable): string {
  return [
    `CREATE TABLE IF NOT EXISTS ${table.qualified} (
  id bigserial PRIMARY KEY,
  at double precision NOT NULL,
  kind text NOT NULL,
  actor text NOT NULL,
  domain text,
  rule text,
  details json NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${table.timeIndex} ON ${table.qualified} (at)`,
  ].join(';\n');
}

/** Time limit of each audit statement: they are rare, and none is on a request's path. */
export const AUDIT_TIMEOUT_MS = 2000;

interface Row {
  readonly id: string;
  readonly at: number;
  readonly kind: string;
  readonly actor: string;
  readonly domain: string | null;
  readonly rule: string | null;
  readonly details: unknown;
}

/**
 * PostgresStore's audit log: rows appended to `<prefix>audit`, read back by time, kind and rule in SQL (the newest
 * `limit`, oldest first). `ready` waits for the store's own migration when it makes the tables.
 */
export class PostgresAuditLog implements AuditLog {
  readonly #pool: pg.Pool;
  readonly #table: AuditTable;
  readonly #ready: () => Promise<void> | undefined;

  constructor(pool: pg.Pool, table: TableName, ready: () => Promise<void> | undefined) {
    this.#pool = pool;
    this.#table = auditTableOf(table);
    this.#ready = ready;
  }

  async #query<R extends object>(text: string, values: readonly unknown[]): Promise<R[]> {
    await this.#ready();
    const query = this.#pool.query<R>(text, [...values]);
    const result = await withTimeout(
      query,
      AUDIT_TIMEOUT_MS,
      () => new Error(`audit: no answer from PostgreSQL in ${AUDIT_TIMEOUT_MS} ms`),
    );
    return result.rows;
  }

  async append(entry: AuditEntry): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table.qualified} (at, kind, actor, domain, rule, details) VALUES ($1, $2, $3, $4, $5, $6)`,
      [entry.at, entry.kind, entry.actor, entry.domain, entry.rule, JSON.stringify(entry.details)],
    );
  }

  async read(query: AuditQuery = {}): Promise<AuditRecord[]> {
    checkAuditQuery(query);
    const rows = await this.#query<Row>(
      `SELECT id::text AS id, at, kind, actor, domain, rule, details FROM ${this.#table.qualified}
WHERE ($1::double precision IS NULL OR at >= $1) AND ($2::text[] IS NULL OR kind = ANY($2))
  AND ($3::text IS NULL OR rule = $3) AND ($4::text IS NULL OR domain = $4)
ORDER BY id DESC LIMIT $5`,
      [
        query.since ?? null,
        query.kinds ?? null,
        query.rule ?? null,
        query.domain ?? null,
        query.limit ?? DEFAULT_AUDIT_READ,
      ],
    );
    return rows
      .flatMap((row) => {
        const entry = auditEntryOf(row);
        return entry === undefined ? [] : [{ ...entry, id: row.id }];
      })
      .reverse();
  }
}

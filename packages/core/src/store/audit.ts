/**
 * The audit trail's store capability: an append-only log of operators' and gateways' acts (pushes, reloads, mode
 * and rollout changes, bans, unbans), the entries' shape, the one filter every store reads them back with, and
 * MemoryStore's bounded log. RedisStore keeps it in a stream, PostgresStore in a table.
 */

import { ConfigError } from '../base/errors.js';

/** What an audit entry records. */
export const AUDIT_KINDS = ['push', 'reload', 'mode', 'rollout', 'ban', 'unban'] as const;

/** One of {@link AUDIT_KINDS}. */
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** A detail's value: text, a number, a flag, a list of names, or null. */
export type AuditValue = string | number | boolean | null | readonly string[];

/** One act, as written. Never a key in clear: a ban names its rule and the key's hashed tag. */
export interface AuditEntry {
  /** Epoch ms on the writer's clock. */
  readonly at: number;
  readonly kind: AuditKind;
  /** Who: `sluice push --by` (default the OS user), or the gateway (`host/pid`) for reloads and bans. */
  readonly actor: string;
  readonly domain: string | null;
  readonly rule: string | null;
  /** Versions, hashes, the mode before and after, the ban's tag and end: by kind (docs/guide/operating.md). */
  readonly details: Readonly<Record<string, AuditValue>>;
}

/** An entry as read back, with the id its store gave it (ids order the entries, oldest first). */
export interface AuditRecord extends AuditEntry {
  readonly id: string;
}

/** Which entries to read back: each field narrows; none reads the newest {@link DEFAULT_AUDIT_READ}. */
export interface AuditQuery {
  /** Entries written at or after this epoch ms. */
  readonly since?: number;
  readonly kinds?: readonly AuditKind[];
  readonly rule?: string;
  readonly domain?: string;
  /** The newest this many matching entries; default {@link DEFAULT_AUDIT_READ}. */
  readonly limit?: number;
}

/** The store capability: appends are never changed nor deleted, except the oldest past a store's bound. */
export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  /** Matching entries, oldest first. */
  read(query?: AuditQuery): Promise<AuditRecord[]>;
}

/** Entries a read answers at most by default. */
export const DEFAULT_AUDIT_READ = 1000;

/** Entries MemoryStore keeps (the oldest go first), and about how many Redis keeps (`XADD MAXLEN ~`). */
export const DEFAULT_AUDIT_ENTRIES = 10_000;

/** Whether an entry is one the query asks for. */
export function matchesAudit(entry: AuditEntry, query: AuditQuery): boolean {
  return (
    (query.since === undefined || entry.at >= query.since) &&
    (query.kinds === undefined || query.kinds.includes(entry.kind)) &&
    (query.rule === undefined || entry.rule === query.rule) &&
    (query.domain === undefined || entry.domain === query.domain)
  );
}

/** The newest `query.limit` records (oldest first) of those, in order, that match. */
export function newestMatching<R extends AuditEntry>(records: readonly R[], query: AuditQuery): R[] {
  const limit = query.limit ?? DEFAULT_AUDIT_READ;
  const matching = records.filter((record) => matchesAudit(record, query));
  return matching.slice(Math.max(0, matching.length - limit));
}

const isText = (value: unknown): value is string => typeof value === 'string';
const orNull = (value: unknown): string | null => (isText(value) ? value : null);

function isValue(value: unknown): value is AuditValue {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return true;
  return Array.isArray(value) && value.every(isText);
}

/**
 * An entry read back from outside the process (a stream field, a row's JSON), checked; undefined when it is not
 * one (written by something else, or by a later version with a kind this one does not know).
 */
export function auditEntryOf(value: unknown): AuditEntry | undefined {
  const v = value as Partial<Record<keyof AuditEntry, unknown>> | null;
  if (v === null || typeof v !== 'object') return undefined;
  const kind = AUDIT_KINDS.find((known) => known === v.kind);
  const details = v.details as Record<string, unknown> | null | undefined;
  if (kind === undefined || typeof v.at !== 'number' || !isText(v.actor)) return undefined;
  if (details === null || typeof details !== 'object' || !Object.values(details).every(isValue))
    return undefined;
  return {
    at: v.at,
    kind,
    actor: v.actor,
    domain: orNull(v.domain),
    rule: orNull(v.rule),
    details: details as AuditEntry['details'],
  };
}

/** Checks a query's fields once, before a store reads with it. */
export function checkAuditQuery(query: AuditQuery): AuditQuery {
  const limit = query.limit;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    throw new ConfigError(`audit read: limit must be a whole number above 0, got ${String(limit)}`);
  const unknown = query.kinds?.find((kind) => !AUDIT_KINDS.includes(kind));
  if (unknown !== undefined)
    throw new ConfigError(`audit read: no kind ${JSON.stringify(unknown)} (${AUDIT_KINDS.join(', ')})`);
  return query;
}

/** MemoryStore's audit log: in process, the newest `maxEntries` kept (a ring: no copy as it turns). */
export class MemoryAuditLog implements AuditLog {
  readonly #ring: AuditRecord[] = [];
  readonly #max: number;
  #next = 0;

  constructor(maxEntries = DEFAULT_AUDIT_ENTRIES) {
    this.#max = maxEntries;
  }

  append(entry: AuditEntry): Promise<void> {
    const record = { ...entry, id: String(++this.#next) };
    if (this.#ring.length < this.#max) this.#ring.push(record);
    else this.#ring[(this.#next - 1) % this.#max] = record;
    return Promise.resolve();
  }

  async read(query: AuditQuery = {}): Promise<AuditRecord[]> {
    checkAuditQuery(query);
    const start = this.#ring.length < this.#max ? 0 : this.#next % this.#max;
    const ordered = [...this.#ring.slice(start), ...this.#ring.slice(0, start)];
    return newestMatching(ordered, query);
  }
}

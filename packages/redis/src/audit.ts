import {
  type AuditEntry,
  type AuditLog,
  type AuditQuery,
  type AuditRecord,
  auditEntryOf,
  checkAuditQuery,
  DEFAULT_AUDIT_ENTRIES,
  DEFAULT_AUDIT_READ,
  matchesAudit,
  withTimeout,
} from '@sluice/core/store';
import { compact } from './script.js';
import { type RedisScript, type RedisTransport, redisScript } from './transport.js';

/**
 * The audit stream: one key under a hash tag of its own, so that on a Cluster it lives on one node and every
 * call names one slot. Entries hold rule names and hashed tags, never a key in clear.
 */
export function auditKey(prefix = 'sluice'): string {
  return `${prefix}:{audit}:log`;
}

const APPEND_SCRIPT: RedisScript = redisScript(
  'AuditAppend',
  compact(`
-- KEYS[1]: the audit stream (auditKey)
-- ARGV[1]: the entries kept, about (MAXLEN ~ trims whole nodes only: cheap)
-- ARGV[2]: the entry, as JSON
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
`),
);

const PAGE_SCRIPT: RedisScript = redisScript(
  'AuditPage',
  compact(`
-- KEYS[1]: the audit stream
-- ARGV[1]: the newest id to read ('+', or '(' and the oldest id of the page before: exclusive)
-- ARGV[2]: entries per page
return redis.call('XREVRANGE', KEYS[1], ARGV[1], '-', 'COUNT', ARGV[2])
`),
);

/** Time limit of each audit call: they are rare, and none is on a request's path. */
export const AUDIT_TIMEOUT_MS = 2000;

/** Entries read per call, newest first, until a read has what it asked for. */
const PAGE = 500;
/**
 * Entries are in the order Redis took them, `at` is each writer's clock: a read for `since` goes on until an
 * entry this much older than `since`, so that a writer's clock this far behind another's loses nothing.
 */
const SKEW_MS = 60_000;

/** One stream entry (`[id, ['e', json]]`) as a record; undefined when it is not one of ours. */
function recordOf(raw: unknown): AuditRecord | undefined {
  const [id, fields] = raw as [unknown, unknown[]];
  const at = Array.isArray(fields) ? fields.indexOf('e') : -1;
  if (typeof id !== 'string' || at < 0) return undefined;
  try {
    const entry = auditEntryOf(JSON.parse(String(fields[at + 1])));
    return entry === undefined ? undefined : { ...entry, id };
  } catch {
    return undefined;
  }
}

/**
 * RedisStore's audit log: a stream (XADD, trimmed to about `maxEntries`), read back newest first a page at a
 * time. Every call has a time limit of its own: an audit write never waits on an outage for long.
 */
export class RedisAuditLog implements AuditLog {
  readonly #transport: RedisTransport;
  readonly #key: string;
  readonly #maxEntries: number;
  readonly #timeoutMs: number;

  constructor(
    transport: RedisTransport,
    prefix: string,
    timeoutMs = AUDIT_TIMEOUT_MS,
    maxEntries = DEFAULT_AUDIT_ENTRIES,
  ) {
    this.#transport = transport;
    this.#key = auditKey(prefix);
    this.#timeoutMs = timeoutMs;
    this.#maxEntries = maxEntries;
  }

  #run(script: RedisScript, args: readonly (string | number)[]): Promise<unknown> {
    const call = this.#transport.runScript(script, [1, this.#key, ...args], false);
    return withTimeout(
      call,
      this.#timeoutMs,
      () => new Error(`audit: no answer from Redis in ${this.#timeoutMs} ms`),
    );
  }

  async append(entry: AuditEntry): Promise<void> {
    await this.#run(APPEND_SCRIPT, [this.#maxEntries, JSON.stringify(entry)]);
  }

  async read(query: AuditQuery = {}): Promise<AuditRecord[]> {
    checkAuditQuery(query);
    const limit = query.limit ?? DEFAULT_AUDIT_READ;
    const oldest = query.since === undefined ? Number.NEGATIVE_INFINITY : query.since - SKEW_MS;
    const found: AuditRecord[] = [];
    let newest = '+';
    let older = false;
    while (found.length < limit && !older) {
      const page = (await this.#run(PAGE_SCRIPT, [newest, PAGE])) as unknown[];
      for (const raw of page) {
        const record = recordOf(raw);
        if (record === undefined) continue;
        older ||= record.at < oldest;
        if (matchesAudit(record, query) && found.length < limit) found.push(record);
      }
      if (page.length < PAGE) break;
      newest = `(${(page.at(-1) as [string])[0]}`;
    }
    return found.reverse();
  }
}

/**
 * Every notice code Sluice logs, in ONE place: each logs once per episode or per limiter, as `[CODE]` after
 * its text, and `silence` takes these codes. The texts live with what notices them (observe/misuse.ts,
 * resilience/monitor.ts, engine/unban.ts, http/notices.ts, http/proxy.ts, @sluice/redis, @sluice/postgres);
 * notices.test.ts checks every table there against this list, so a code is added here first.
 */
export const NOTICE_CODES = {
  /** How limiters are built (observe/misuse.ts). */
  limiter: ['SLUICE_LIMITER_PER_REQUEST', 'SLUICE_STORE_SHARED'],
  /** A store's episodes of failure, and of requests refused at the pending bound (resilience/monitor.ts). */
  store: [
    'SLUICE_STORE_UNREACHABLE',
    'SLUICE_STORE_RECOVERED',
    'SLUICE_STORE_BUSY',
    'SLUICE_STORE_CAUGHT_UP',
  ],
  /** Leases of open connections renewed late or not at all, then in time again (engine/leaseKeeper.ts). */
  leases: ['SLUICE_LEASES_UNRENEWED', 'SLUICE_LEASES_RENEWED'],
  /** A region cut off from the global budget's store, then back (regions/partition.ts). */
  regions: ['SLUICE_GLOBAL_UNREACHABLE', 'SLUICE_GLOBAL_REJOINED'],
  /** An operator's act (engine/unban.ts). */
  operator: ['SLUICE_BAN_LIFTED'],
  /** The audit trail's writes failing, then written again (observe/audit.ts). */
  audit: ['SLUICE_AUDIT_UNWRITTEN', 'SLUICE_AUDIT_WRITTEN'],
  /** Adapters' misconfiguration smells (http/notices.ts). */
  adapter: [
    'SLUICE_UNVALIDATED_API_KEY',
    'SLUICE_RAW_IPV6_KEY',
    'SLUICE_ROUTE_TEMPLATE_UNSEEN',
    'SLUICE_ROUTE_KEY_PATH',
    'SLUICE_COST_BEFORE_BODY',
  ],
  /** Proxy trust smells (http/proxy.ts). */
  proxy: ['SLUICE_XFF_UNTRUSTED', 'SLUICE_TRUST_ALL_PROXIES', 'SLUICE_FORWARDED_IGNORED'],
  /** The store packages' own (@sluice/redis, @sluice/postgres). */
  stores: ['SLUICE_REDIS_EVICTION', 'SLUICE_STORE_CLOSED', 'SLUICE_POSTGRES_SWEEP_FAILED'],
} as const;

/** A notice code. */
export type NoticeCode = (typeof NOTICE_CODES)[keyof typeof NOTICE_CODES][number];

/** Where notices go: anything with a warn(message), such as console or a pino logger. */
export interface NoticeLogger {
  warn(message: string): void;
}

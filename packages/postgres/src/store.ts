import {
  type AuditLog,
  type BreakerOptions,
  type Check,
  type CheckResult,
  ConfigError,
  checkOptionNames,
  DecisionError,
  type Lease,
  type ResilientStore,
  resilientStore,
  type Store,
  type StoreHealth,
} from '@sluice/core/store';
import pg from 'pg';
import { auditTableOf, createAuditTableSql, PostgresAuditLog } from './audit.js';
import { checkout } from './checkout.js';
import { createTableSql, type TableName, tableName } from './schema.js';
import { sweepExpired } from './sweep.js';
import type { PostgresClock, TransactionLimits } from './transaction.js';
import { Transactions } from './transactions.js';

/** Where the store's notices go (the sweep failing, and the wrapper's unreachable and recovered lines). */
export interface PostgresLogger {
  warn(message: string): void;
}

/** Options of {@link PostgresStore}: a `pool` of yours, or a `connectionString` the store makes its own pool for. */
export interface PostgresStoreOptions {
  /** Your `pg` Pool; the store never ends it. Give it a `connectionTimeoutMillis`, so waits for a connection end. */
  pool?: pg.Pool;
  /** `postgres://user:password@host:port/db`: the store makes (and on close ends) a pool of {@link DEFAULT_POOL_SIZE}. */
  connectionString?: string;
  /** The table's schema. Default `public`. */
  schema?: string;
  /** The table is `<tablePrefix>counters`. Default `sluice_`. */
  tablePrefix?: string;
  /**
   * Create the schema and table (idempotent), starting when the store is made, so the first request finds them
   * made and a connection open; calls wait for it (a failure is retried by the next call). Default false: run
   * `sluice migrate --postgres URL`.
   */
  createTable?: boolean;
  /** Default `database`: every call takes the database's clock, so gateways with skewed clocks agree. `app`: the engine's `now`. */
  clock?: PostgresClock;
  /**
   * Time limit of each call (one transaction of one round trip, two when a row changed), ms: given alone, a
   * fixed limit. With the defaults, the limit while PostgreSQL is suspected hung (calls were given up unanswered,
   * and nothing has answered since). Default {@link DEFAULT_TIMEOUT_MS}.
   */
  timeoutMs?: number;
  /**
   * The time limit while PostgreSQL keeps answering: a busy database is waited for this long before a request
   * fails open, as long as some call is answered at least every `DEFAULT_STALL_MS` (200 ms; up to
   * `DEFAULT_STALL_CAP_MS`, 280 ms, for a store whose own pace is slower); calls that waited that long with no
   * answer in between are failed then (a hung database). Default
   * {@link DEFAULT_MAX_TIMEOUT_MS}, or `timeoutMs` when only that is given.
   */
  maxTimeoutMs?: number;
  /** Skip PostgreSQL for `cooldownMs` after `failures` consecutive failed calls; `false` disables. */
  breaker?: BreakerOptions | false;
  /** While PostgreSQL fails: `{gateways: N}` counts in process with each limit divided by N, or your own Store. */
  fallback?: { gateways: number } | Store;
  /** Calls waiting for PostgreSQL at most; beyond it they fail at once. Default 1000. */
  maxPending?: number;
  /** How often expired rows are deleted, ms; `false`: never (delete them yourself). Default 60,000. */
  sweepEveryMs?: number | false;
  /** Rows deleted per statement by the sweep; a sweep runs at most 10 such statements. Default 1000. */
  sweepBatch?: number;
  /** Where notices go. Default `console`. */
  logger?: PostgresLogger;
}

/** Default time limit of a call suspected hung: one or two round trips and, at times, a new connection's start. */
export const DEFAULT_TIMEOUT_MS = 100;

/**
 * Default time limit while PostgreSQL answers, 1 s: a busy database (a saturated machine stalls it for tens to
 * hundreds of ms) is waited for; a hung one (nothing answered for 200 ms) has its calls failed then, and the next
 * ones get `timeoutMs`.
 */
export const DEFAULT_MAX_TIMEOUT_MS = 1000;
/** Connections in a pool the store makes from a connection string. */
export const DEFAULT_POOL_SIZE = 10;
const DEFAULT_SWEEP_EVERY_MS = 60_000;
const DEFAULT_SWEEP_BATCH = 1000;
const SWEEP_BATCHES = 10;

/** Every option {@link PostgresStore} reads: any other name is a misspelling, refused with a did-you-mean. */
const OPTION_NAMES: readonly (keyof PostgresStoreOptions)[] = [
  'pool',
  'connectionString',
  'schema',
  'tablePrefix',
  'createTable',
  'clock',
  'timeoutMs',
  'maxTimeoutMs',
  'breaker',
  'fallback',
  'maxPending',
  'sweepEveryMs',
  'sweepBatch',
  'logger',
];

function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

/** Your pool, or one made from the connection string (true: the store owns it and ends it on close). */
function poolOf(options: PostgresStoreOptions): { pool: pg.Pool; owned: boolean } {
  if ((options.pool === undefined) === (options.connectionString === undefined)) {
    throw new ConfigError('PostgresStore needs one of pool (a pg Pool) or connectionString');
  }
  if (options.pool !== undefined) {
    if (typeof options.pool.connect !== 'function') throw new ConfigError('pool must be a pg Pool');
    return { pool: options.pool, owned: false };
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: 5000,
  });
  return { pool, owned: true };
}

/** How long a transaction may wait for locks or idle, and when a round trip is abandoned, for a time limit. */
function limitsFor(timeoutMs: number): TransactionLimits {
  return {
    lockTimeoutMs: timeoutMs,
    idleTimeoutMs: Math.max(1000, 10 * timeoutMs),
    abandonAfterMs: Math.max(1000, 10 * timeoutMs),
  };
}

/** Creates the store's schema and table if missing (idempotent, safe from several processes at once). */
export async function createTable(pool: pg.Pool, table: TableName): Promise<void> {
  const client = await checkout(pool);
  try {
    const audit = createAuditTableSql(auditTableOf(table));
    await client.query(`BEGIN;\n${createTableSql(table)};\n${audit};\nCOMMIT`);
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
}

/**
 * A Store in PostgreSQL: every check of a request in ONE transaction (one round trip on rows this process saw
 * last, two when one changed), its rows locked in one order, decided by core's evaluator, written back only when
 * no enforcing check denied. Calls time out, a breaker skips the database during an outage, an optional fallback
 * counts in process meanwhile (core's resilient store).
 */
export class PostgresStore implements Store {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #table: TableName;
  readonly #transactions: Transactions;
  readonly #resilient: ResilientStore;
  readonly #logger: PostgresLogger;
  readonly #clock: PostgresClock;
  readonly #sweepBatch: number;
  readonly #sweepTimer: NodeJS.Timeout | undefined;
  readonly #onPoolError = (error: Error) => this.#resilient.clientError(error);
  #migration: Promise<void> | undefined;
  #migrated = false;
  #sweeping = false;
  #sweepFailing = false;
  /** Every call settles within its time limit, unless a fallback store of yours may take longer. */
  readonly timeLimited: boolean;
  /** The audit trail: rows of `<tablePrefix>audit`, beside the counters (audit.ts). */
  readonly audit: AuditLog;

  constructor(options: PostgresStoreOptions) {
    checkOptionNames('PostgresStore', options, OPTION_NAMES);
    const { pool, owned } = poolOf(options);
    this.#pool = pool;
    this.#ownsPool = owned;
    this.#table = tableName(options.schema, options.tablePrefix);
    const clock = options.clock ?? 'database';
    if (clock !== 'database' && clock !== 'app') throw new ConfigError("clock must be 'database' or 'app'");
    this.#clock = clock;
    const timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onlyTimeout = options.timeoutMs !== undefined && options.maxTimeoutMs === undefined;
    const maxTimeoutMs = positive(
      'maxTimeoutMs',
      options.maxTimeoutMs ?? (onlyTimeout ? timeoutMs : Math.max(timeoutMs, DEFAULT_MAX_TIMEOUT_MS)),
    );
    this.#sweepBatch = positive('sweepBatch', options.sweepBatch ?? DEFAULT_SWEEP_BATCH, true);
    this.#logger = options.logger ?? console;
    const create = options.createTable === true;
    const ready = create ? () => (this.#migrated ? undefined : this.#migrate()) : () => undefined;
    this.#transactions = new Transactions({
      pool,
      table: this.#table,
      clock,
      timeoutMs: () => this.#resilient.timeoutMs,
      limits: limitsFor(maxTimeoutMs),
      ready,
    });
    this.audit = new PostgresAuditLog(pool, this.#table, ready);
    this.#resilient = resilientStore(this.#transactions, {
      name: 'PostgreSQL',
      timeoutMs,
      maxTimeoutMs,
      logger: this.#logger,
      // The evaluator failed on a row PostgreSQL gave: that request fails open, the database is not unreachable.
      answered: (error) => error instanceof DecisionError,
      ...(options.maxPending === undefined
        ? {}
        : { maxPending: positive('maxPending', options.maxPending, true) }),
      ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
      ...(options.fallback === undefined ? {} : { fallback: options.fallback }),
    });
    this.timeLimited = this.#resilient.timeLimited;
    // Started now, not on the first call: that call would pay a new connection and the DDL within its time limit.
    if (create) this.#migrate().catch(() => {}); // a failure is the next call's to report
    // Without a listener, an idle connection's error (the server restarted) would crash the process.
    pool.on('error', this.#onPoolError);
    const every = options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS;
    if (every !== false) {
      this.#sweepTimer = setInterval(() => void this.#sweepQuietly(), positive('sweepEveryMs', every));
      this.#sweepTimer.unref(); // a sweep is housekeeping: it never keeps the process alive
    }
  }

  /** The table, as `schema.table`. */
  get table(): string {
    return this.#table.display;
  }

  /** Calls waiting for PostgreSQL (including those already timed out here): what `maxPending` bounds. */
  get pending(): number {
    return this.#resilient.pending;
  }

  /** For readiness probes and metrics, without a round trip. */
  health(): StoreHealth {
    return this.#resilient.health();
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return this.#resilient.evaluate(checks, now);
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.#resilient.release(leases, now);
  }

  /** Extends the held concurrency leases (a long-lived connection's heartbeat): one transaction for all. */
  renew(leases: readonly Lease[], now: number): Promise<number | undefined> {
    return this.#resilient.renew(leases, now);
  }

  /**
   * Lifts the ban of key `tag` under `rule` (its violations and escalation level go too); true when it had one.
   * One transaction, straight to PostgreSQL: an operator's act, not a request's, so no fallback answers it.
   */
  unban(rule: string, tag: string): Promise<boolean> {
    return this.#transactions.unban(rule, tag);
  }

  /**
   * Deletes expired rows now, in bounded batches (at most 10 statements of `sweepBatch` rows); answers how many.
   * The timer calls it every `sweepEveryMs`. On the app clock, "expired" is by the latest `now` a call ran at.
   */
  async sweep(): Promise<number> {
    const now = this.#clock === 'app' ? this.#transactions.latestNow : undefined;
    if (this.#clock === 'app' && now === undefined) return 0;
    return sweepExpired(this.#pool, this.#table, now, { batch: this.#sweepBatch, batches: SWEEP_BATCHES });
  }

  /** One sweep from the timer: never two at once; a failing sweep is told once until one succeeds. */
  async #sweepQuietly(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      await this.sweep();
      this.#sweepFailing = false;
    } catch (error) {
      if (!this.#sweepFailing)
        this.#logger.warn(
          `SLUICE_POSTGRES_SWEEP_FAILED: expired rows of ${this.#table.display} not deleted: ${(error as Error).message}`,
        );
      this.#sweepFailing = true;
    } finally {
      this.#sweeping = false;
    }
  }

  /** Creates the table once (again after a failure), before the first call. */
  #migrate(): Promise<void> {
    this.#migration ??= createTable(this.#pool, this.#table).then(
      () => {
        this.#migrated = true;
      },
      (error: unknown) => {
        this.#migration = undefined;
        throw error;
      },
    );
    return this.#migration;
  }

  /** Stops the sweep and the calls; ends the pool when the store made it (yours stays open). */
  async close(): Promise<void> {
    if (this.#sweepTimer !== undefined) clearInterval(this.#sweepTimer);
    await this.#resilient.close();
    this.#pool.off('error', this.#onPoolError);
    if (this.#ownsPool) await this.#pool.end();
  }
}

/** Options of {@link migrate}. */
export type MigrateOptions = Pick<
  PostgresStoreOptions,
  'pool' | 'connectionString' | 'schema' | 'tablePrefix'
>;

/**
 * Creates the store's schema and table (the documented step before the first gateway starts; `sluice migrate
 * --postgres URL` runs it). Idempotent. Answers the table's name, `schema.table`.
 */
export async function migrate(options: MigrateOptions): Promise<string> {
  checkOptionNames('migrate', options, ['pool', 'connectionString', 'schema', 'tablePrefix']);
  const table = tableName(options.schema, options.tablePrefix);
  const { pool, owned } = poolOf(options);
  try {
    await createTable(pool, table);
  } finally {
    if (owned) await pool.end();
  }
  return table.display;
}

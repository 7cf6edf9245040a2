import {
  type AuditLog,
  type Board,
  type BreakerOptions,
  type Check,
  type CheckResult,
  ConfigError,
  checkOptionNames,
  type FactorReport,
  type Lease,
  PendingCalls,
  type ResilientStore,
  resilientStore,
  type Store,
  type StoreHealth,
  strandedAfterMs,
} from '@sluice/core/store';
import type { Cluster, Redis } from 'ioredis';
import { RedisFactors } from './adaptiveFactors.js';
import { RedisAuditLog } from './audit.js';
import { RedisBoard } from './board.js';
import type { ClientWatcher } from './clientEvents.js';
import { assertCheck, assertPrefix, assertSafeId } from './codec.js';
import { KeyStateError } from './errors.js';
import { FirstConnection } from './firstConnection.js';
import { IoredisTransport, isIoredis } from './ioredisTransport.js';
import { type StoreLogger, warnClosed, warnIfEvicting } from './monitor.js';
import {
  isNodeRedis,
  type NodeRedisClient,
  type NodeRedisCluster,
  type NodeRedisSentinel,
  NodeRedisTransport,
} from './nodeRedisTransport.js';
import { ScriptStore } from './scriptStore.js';
import type { StateFormat } from './stateFormat.js';
import type { ConnectionState, RedisTransport } from './transport.js';

export { strandedAfterMs };

/** Where time comes from: the `now` the engine passes (`app`), or Redis `TIME` inside the script. */
export type RedisClock = 'app' | 'redis';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * The client you created and keep (the store never quits it): an ioredis `Redis` (standalone or
   * Sentinel) or `Cluster`, or a node-redis (`redis` package) client, Cluster or Sentinel client, connected.
   */
  client: Redis | Cluster | NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;
  /** First part of every key; no braces. Default `sluice`. */
  prefix?: string;
  /** Default `app`: the limiter's clock (by default one that never steps back). Use `redis` when gateway clocks drift. */
  clock?: RedisClock;
  /**
   * Time limit of each Redis call, ms: given alone, a fixed limit. With the defaults, the limit while Redis
   * is suspected hung (calls were given up unanswered, and nothing has answered since). Default
   * {@link DEFAULT_TIMEOUT_MS}.
   */
  timeoutMs?: number;
  /**
   * The time limit while Redis keeps answering: a busy Redis is waited for this long before a request fails
   * open, as long as some call is answered at least every `DEFAULT_STALL_MS` (200 ms; up to
   * `DEFAULT_STALL_CAP_MS`, 280 ms, for a store whose own pace is slower); calls that waited that long with no
   * answer in between are failed then (a hung Redis). Also the wait for the first connection.
   * Default {@link DEFAULT_MAX_TIMEOUT_MS}, or `timeoutMs` when only that is given.
   */
  maxTimeoutMs?: number;
  /** Skip Redis for `cooldownMs` after `failures` consecutive failed calls; `false` disables. */
  breaker?: BreakerOptions | false;
  /**
   * While Redis fails: `{gateways: N}` counts in an in-process MemoryStore with each limit divided by N
   * (rounded up, at least 1), or your own Store. Its answers are marked `degraded`. Default: none (throw).
   */
  fallback?: { gateways: number } | Store;
  /**
   * Requests waiting for Redis at most: each evaluate() or release() counts once from the moment it is
   * queued until Redis answers (after its time limit too), its connection closes, or at the latest
   * {@link strandedAfterMs} after its time limit, however many share a script call (a request held back by
   * coalescing and never sent stops counting at its time limit). Beyond it they fail at once. Default
   * {@link DEFAULT_MAX_PENDING}.
   */
  maxPending?: number;
  /**
   * Coalescing: every evaluate() made in the same turn of the event loop goes to Redis as ONE script call
   * (one per slot on a Cluster), each request keeping its own all-or-nothing, with one timer for the
   * call. The call leaves when the turn ends; but while a call of the same slot is still out, the batch is
   * held and keeps collecting until that call settles, then leaves at once: under load, fewer and bigger
   * calls; when idle, no added wait. A held batch keeps `timeoutMs` from the end of its first turn, the
   * hold included (its own timer): past it, its requests fail as timed out, sent or not. A batch leaves
   * at once when it holds `maxChecks` checks (default {@link DEFAULT_MAX_BATCH_CHECKS}). Releases are never
   * held. `false`: one script call per request. Default true.
   */
  coalesce?: boolean | { maxChecks: number };
  /**
   * How counter states are written (the algorithms whose state is numbers: every one but sliding_log and
   * concurrency): `'text'`, which every version of @sluice/redis reads, or `'binary'` (little-endian doubles
   * behind a zero byte), which costs Redis about a tenth less CPU per check when calls are coalesced
   * (bench/redis-state-codec.ts) but is read only by versions from this one on. This version reads both,
   * whichever it writes: move a fleet in two steps, this version everywhere first (writing text), then
   * `'binary'` (see the package README, "State format"). Default `'text'`.
   */
  stateFormat?: StateFormat;
  /**
   * Where the store's notices go (Redis unreachable, reachable again, an evicting maxmemory-policy), one
   * line each, with a stable code. Default `console`.
   */
  logger?: StoreLogger;
}

/**
 * Default time limit of a Redis call suspected hung: 20 ms. Once calls have been given up (nothing answered for
 * 200 ms, or a call unanswered for {@link DEFAULT_MAX_TIMEOUT_MS}), the next ones fail open after 20 ms (the seed's
 * gateway uses 5 ms against a Redis in the same zone) until Redis answers again.
 */
export const DEFAULT_TIMEOUT_MS = 20;

/**
 * Default time limit while Redis answers, 1 s: on a saturated machine Redis stalls for tens to hundreds of
 * ms (issue 24's bench runs saw up to about 1 s), and a request that waits for the answer costs less than one
 * that fails open. A hung Redis (nothing answered for 200 ms) has its waiting calls failed then, and the next
 * ones get `timeoutMs`.
 */
export const DEFAULT_MAX_TIMEOUT_MS = 1000;

/** Default bound on requests waiting for Redis (and so on what an outage can pile up in ioredis's queues). */
export const DEFAULT_MAX_PENDING = 1000;

/**
 * Default cap on the checks of one coalesced script call. Redis runs a script alone; at a few
 * microseconds per check, 256 checks hold it about a millisecond.
 */
export const DEFAULT_MAX_BATCH_CHECKS = 256;

/** Every option {@link RedisStore} reads: any other name is a misspelling, refused with a did-you-mean. */
const OPTION_NAMES: readonly (keyof RedisStoreOptions)[] = [
  'client',
  'prefix',
  'clock',
  'timeoutMs',
  'maxTimeoutMs',
  'breaker',
  'fallback',
  'maxPending',
  'coalesce',
  'stateFormat',
  'logger',
];

/** The transport of a client, by its library. */
function transportOf(client: unknown): RedisTransport {
  if (isIoredis(client)) return new IoredisTransport(client);
  if (isNodeRedis(client)) return new NodeRedisTransport(client);
  throw new ConfigError(
    'RedisStore needs an ioredis Redis or Cluster client, or a node-redis (redis package) client or Cluster',
  );
}

function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

/** A Redis reply the script could not read for one request: Redis answered, so no failure of the store. */
const answered = (error: unknown): boolean => error instanceof KeyStateError;

/**
 * A Store in Redis or Redis Cluster. Each call runs every check of a request in ONE script call per
 * Cluster slot (one in all on a single server): the script decides every check, then commits only if no
 * enforcing check denied. Calls time out, a breaker skips Redis during an outage, and an optional
 * in-process fallback keeps coarse limits meanwhile (core's resilient store, around the script store).
 */
export class RedisStore implements Store {
  readonly #transport: RedisTransport;
  readonly #calls: PendingCalls;
  readonly #resilient: ResilientStore;
  readonly #factors: RedisFactors;
  readonly #scripts: ScriptStore;
  /** The audit trail: a stream under `<prefix>:{audit}:log` (audit.ts). */
  readonly audit: AuditLog;
  /** The gateways' boards of heavy hitters: two keys under `<prefix>:{board}:` (board.ts). */
  readonly board: Board;
  /**
   * Every call settles within its time limit (plus the rest of the turn it waits in, with coalescing, held or
   * not), so the engine needs no timer of its own per call; true unless a fallback store of yours may take
   * longer.
   */
  readonly timeLimited: boolean;
  readonly #logger: StoreLogger;
  #evictionChecked = false;
  /** 'open'; 'closed' once close() was called; 'told' once a call after that was warned about. */
  #closed: 'open' | 'closed' | 'told' = 'open';
  readonly #firstConnection = new FirstConnection();
  /** The store's side of the client's events; held here, weakly by the client (see watchClient). */
  readonly #watcher: ClientWatcher = {
    clientError: (error) => this.#resilient.clientError(error),
    connectionClosed: () => {
      // Before the first connection nothing was sent: the calls wait for it (see FirstConnection).
      const sent = this.#transport.state() !== 'connecting';
      if (sent && this.#transport.dropsUnansweredOnClose) this.#calls.connectionLost();
    },
    clientReady: () => {
      this.#firstConnection.ready();
      this.#resilient.connectionReady();
      this.#checkEviction();
    },
  };
  readonly #unwatch: () => void;
  /**
   * The connection's state for the resilient store: a first connection that did not come up within the
   * first wait counts as down (calls fail at once, the breaker opens) until the client is ready: a Redis
   * that has never answered is not busy, and waiting again per request would only repeat that wait.
   */
  readonly #connection = (): ConnectionState => {
    const state = this.#transport.state();
    return state === 'connecting' && this.#firstConnection.gaveUp ? 'down' : state;
  };

  constructor(options: RedisStoreOptions) {
    checkOptionNames('RedisStore', options, OPTION_NAMES);
    const transport = transportOf(options.client);
    this.#transport = transport;
    const prefix = assertPrefix(options.prefix ?? 'sluice');
    this.#factors = new RedisFactors(transport, prefix);
    this.audit = new RedisAuditLog(transport, prefix);
    this.board = new RedisBoard(transport, prefix);
    const clock = options.clock ?? 'app';
    if (clock !== 'app' && clock !== 'redis') throw new ConfigError("clock must be 'app' or 'redis'");
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const onlyTimeout = options.timeoutMs !== undefined && options.maxTimeoutMs === undefined;
    this.#calls = new PendingCalls({
      timeoutMs,
      maxTimeoutMs:
        options.maxTimeoutMs ?? (onlyTimeout ? timeoutMs : Math.max(timeoutMs, DEFAULT_MAX_TIMEOUT_MS)),
      maxPending: options.maxPending ?? DEFAULT_MAX_PENDING,
      name: 'Redis',
    });
    const stateFormat = options.stateFormat ?? 'text';
    if (stateFormat !== 'text' && stateFormat !== 'binary')
      throw new ConfigError("stateFormat must be 'text' or 'binary'");
    const coalesce = options.coalesce ?? true;
    const maxChecks =
      coalesce === false
        ? undefined
        : positive(
            'coalesce.maxChecks',
            coalesce === true ? DEFAULT_MAX_BATCH_CHECKS : coalesce.maxChecks,
            true,
          );
    const scripts = new ScriptStore(
      transport,
      { prefix, redisClock: clock === 'redis', stateFormat },
      this.#calls,
      maxChecks,
      this.#firstConnection,
    );
    this.#scripts = scripts;
    this.#logger = options.logger ?? console;
    this.#resilient = resilientStore(scripts, {
      name: 'Redis',
      calls: this.#calls,
      connection: this.#connection,
      answered,
      logger: this.#logger,
      ...(options.breaker === undefined ? {} : { breaker: options.breaker }),
      ...(options.fallback === undefined ? {} : { fallback: options.fallback }),
    });
    this.timeLimited = this.#resilient.timeLimited;
    // An error listener of ours also stops the client from logging every failed reconnect: the store
    // reports the outage once, and the recovery once, through `logger`.
    this.#unwatch = transport.watch(this.#watcher);
    if (transport.state() === 'ready') this.#checkEviction();
  }

  /** Warns once per store if Redis may evict limiter keys; on the first ready connection. */
  #checkEviction(): void {
    if (this.#evictionChecked) return;
    this.#evictionChecked = true;
    warnIfEvicting(() => this.#transport.configGet('maxmemory-policy'), this.#logger).catch(() => {});
  }

  /**
   * Requests (evaluations, releases) queued for or sent to Redis and not yet answered, including those
   * that already timed out here: what `maxPending` bounds.
   */
  get pending(): number {
    return this.#calls.count;
  }

  /** For readiness probes and metrics, without a round trip. */
  health(): StoreHealth {
    return this.#resilient.health();
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (this.#closed === 'closed') {
      this.#closed = 'told';
      warnClosed(this.#logger);
    }
    try {
      for (const check of checks) assertCheck(check);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#resilient.evaluate(checks, now);
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    try {
      for (const lease of leases) assertSafeId(lease);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#resilient.release(leases, now);
  }

  /** Extends the held concurrency leases (a long-lived connection's heartbeat): one script call for all. */
  renew(leases: readonly Lease[], now: number): Promise<number | undefined> {
    try {
      for (const lease of leases) assertSafeId(lease);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#resilient.renew(leases, now);
  }

  /** Lifts a key's ban under a rule (its ban state in Redis deleted); true when it had one. */
  unban(rule: string, tag: string): Promise<boolean> {
    try {
      assertSafeId({ rule, tag });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#scripts.unban(rule, tag);
  }

  /** Folds a gateway's outcomes into an adaptive rule's fleet-wide factor: one script call, one small key. */
  adaptFactor(report: FactorReport, now: number): Promise<number> {
    return this.#factors.adaptFactor(report, now);
  }

  /** Stops using Redis (the client stays open: it is yours) and closes the fallback. */
  close(): Promise<void> {
    if (this.#closed === 'open') this.#closed = 'closed';
    this.#unwatch();
    return this.#resilient.close();
  }
}

import {
  type Check,
  type CheckResult,
  ConfigError,
  type Lease,
  MemoryStore,
  type Store,
  StoreError,
  type StoreErrorKind,
  type StoreHealth,
} from '@sluice/core';
import type { Cluster, Redis } from 'ioredis';
import { Breaker, type BreakerOptions, DEFAULT_BREAKER } from './breaker.js';
import type { ClientWatcher } from './clientEvents.js';
import { Coalescer } from './coalescer.js';
import {
  assertCheck,
  assertPrefix,
  assertSafeId,
  bySlot,
  groupsFor,
  isWrongType,
  leaseStateError,
  misTypedLeaseKeys,
  refundChecks,
  releaseCall,
  strandedLeases,
} from './codec.js';
import { KeyStateError, toStoreError } from './errors.js';
import { InFlight } from './inflight.js';
import { IoredisTransport, isIoredis } from './ioredisTransport.js';
import { FailureMonitor, type StoreLogger, warnIfEvicting } from './monitor.js';
import {
  isNodeRedis,
  type NodeRedisClient,
  type NodeRedisCluster,
  NodeRedisTransport,
} from './nodeRedisTransport.js';
import { EVALUATE_SCRIPT, RELEASE_SCRIPT } from './script.js';
import { type CallSettings, evaluateArgv, type Group, type GroupAnswer, parseReply } from './scriptCall.js';
import { slotOfTag } from './slot.js';
import { type RedisScript, type RedisTransport, redisScript, type ScriptArgs } from './transport.js';

/** Where time comes from: the `now` the engine passes (`app`), or Redis `TIME` inside the script. */
export type RedisClock = 'app' | 'redis';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * The client you created and keep (the store never quits it): an ioredis `Redis` (standalone or
   * Sentinel) or `Cluster`, or a node-redis (`redis` package) client or Cluster, connected.
   */
  client: Redis | Cluster | NodeRedisClient | NodeRedisCluster;
  /** First part of every key; no braces. Default `sluice`. */
  prefix?: string;
  /** Default `app`: the limiter's clock. Use `redis` when gateway clocks drift. */
  clock?: RedisClock;
  /** Time limit of each Redis call, ms. Default {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number;
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
   * {@link strandedAfterMs} after its time limit, however many share a script call. Beyond it they fail
   * at once. Default {@link DEFAULT_MAX_PENDING}.
   */
  maxPending?: number;
  /**
   * Coalescing: every evaluate() made in the same turn of the event loop goes to Redis as ONE script call
   * (one per slot on a Cluster), each request keeping its own all-or-nothing, with one timer for the
   * call. The call leaves when the turn ends, or at once when it holds `maxChecks` checks (default
   * {@link DEFAULT_MAX_BATCH_CHECKS}). `false`: one script call per request. Default true.
   */
  coalesce?: boolean | { maxChecks: number };
  /**
   * Standalone Redis: script calls made in the same turn of the event loop leave in one socket write (the
   * socket is corked until the turn ends), so concurrent requests share system calls. Default true.
   * With `coalesce` it only matters for releases and for batches that fill up within a turn.
   */
  batchWrites?: boolean;
  /**
   * Where the store's notices go (Redis unreachable, reachable again, an evicting maxmemory-policy), one
   * line each, with a stable code. Default `console`.
   */
  logger?: StoreLogger;
}

/**
 * Default time limit of a Redis call: 20 ms. The seed's gateway uses 5 ms against a Redis in the same
 * zone; 20 ms leaves room for a garbage-collection pause or a busy event loop before failing open.
 */
export const DEFAULT_TIMEOUT_MS = 20;

/** Default bound on requests waiting for Redis (and so on what an outage can pile up in ioredis's queues). */
export const DEFAULT_MAX_PENDING = 1000;

/**
 * Default cap on the checks of one coalesced script call. Redis runs a script alone; at a few
 * microseconds per check, 256 checks hold it about a millisecond.
 */
export const DEFAULT_MAX_BATCH_CHECKS = 256;

/**
 * How long after its time limit a call unanswered on a live connection keeps its pending slot: the
 * larger of 1 s and 10 time limits. A Redis that is only slow answers well within it; a command that
 * ioredis lost without settling it frees its slot then at the latest.
 */
export function strandedAfterMs(timeoutMs: number): number {
  return Math.max(1000, 10 * timeoutMs);
}

const EVALUATE = redisScript('Evaluate', EVALUATE_SCRIPT);
const RELEASE = redisScript('Release', RELEASE_SCRIPT);

/** The transport of a client, by its library. */
function transportOf(client: unknown, batchWrites: boolean): RedisTransport {
  if (isIoredis(client)) return new IoredisTransport(client, batchWrites);
  if (isNodeRedis(client)) return new NodeRedisTransport(client);
  throw new ConfigError(
    'RedisStore needs an ioredis Redis or Cluster client, or a node-redis (redis package) client or Cluster',
  );
}

function kindOf(error: StoreError): StoreErrorKind {
  if (error.code === 'ERR_SLUICE_STORE_TIMEOUT') return 'timeout';
  if (error.code === 'ERR_SLUICE_BREAKER_OPEN') return 'breaker_open';
  return 'error';
}

function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

/** Divides every limit by the gateway count (rounded up, at least 1; a zero limit stays zero). */
function scaleChecks(checks: readonly Check[], gateways: number): Check[] {
  const share = (n: number) => (n === 0 ? 0 : Math.max(1, Math.ceil(n / gateways)));
  return checks.map((check) => ({
    ...check,
    params: { ...check.params, limit: share(check.params.limit), burst: share(check.params.burst) },
  }));
}

/**
 * A Store in Redis or Redis Cluster. Each call runs every check of a request in ONE script call per
 * Cluster slot (one in all on a single server): the script decides every check, then commits only if no
 * enforcing check denied. Calls time out, a breaker skips Redis during an outage, and an optional
 * in-process fallback keeps coarse limits meanwhile.
 */
export class RedisStore implements Store {
  readonly #transport: RedisTransport;
  readonly #prefix: string;
  readonly #clock: RedisClock;
  readonly #timeoutMs: number;
  readonly #maxPending: number;
  readonly #breaker: Breaker | undefined;
  readonly #fallback: Store | undefined;
  readonly #fallbackGateways: number;
  /**
   * Every call settles within `timeoutMs` (plus the rest of the turn it waits in, with coalescing), so the
   * engine needs no timer of its own per call; true unless a fallback store of yours may take longer.
   */
  readonly timeLimited: boolean;
  readonly #settings: CallSettings;
  /** Collects a turn's evaluations into one call; undefined when `coalesce` is off. */
  readonly #coalescer: Coalescer | undefined;
  #pending = 0;
  #closed = false;
  readonly #inFlight: InFlight;
  readonly #monitor: FailureMonitor;
  readonly #logger: StoreLogger;
  #evictionChecked = false;
  /** The store's side of the client's events; held here, weakly by the client (see watchClient). */
  readonly #watcher: ClientWatcher = {
    clientError: (error) => this.#monitor.clientError(error),
    connectionClosed: () => {
      if (this.#transport.dropsUnansweredOnClose) this.#inFlight.connectionLost();
    },
    clientReady: () => this.#checkEviction(),
  };
  readonly #unwatch: () => void;

  constructor(options: RedisStoreOptions) {
    this.#transport = transportOf(options.client, options.batchWrites ?? true);
    this.#prefix = assertPrefix(options.prefix ?? 'sluice');
    this.#clock = options.clock ?? 'app';
    if (this.#clock !== 'app' && this.#clock !== 'redis')
      throw new ConfigError("clock must be 'app' or 'redis'");
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#maxPending = positive('maxPending', options.maxPending ?? DEFAULT_MAX_PENDING, true);
    this.#settings = { prefix: this.#prefix, redisClock: this.#clock === 'redis' };
    const coalesce = options.coalesce ?? true;
    if (coalesce !== false) {
      const maxChecks = coalesce === true ? DEFAULT_MAX_BATCH_CHECKS : coalesce.maxChecks;
      this.#coalescer = new Coalescer(this.#sendGroups, positive('coalesce.maxChecks', maxChecks, true));
    }
    const breaker = options.breaker ?? DEFAULT_BREAKER;
    if (breaker !== false) {
      positive('breaker.failures', breaker.failures, true);
      positive('breaker.cooldownMs', breaker.cooldownMs);
      this.#breaker = new Breaker(breaker);
    }
    const fallback = options.fallback;
    this.#fallbackGateways = 1;
    if (fallback !== undefined && 'gateways' in fallback) {
      this.#fallbackGateways = positive('fallback.gateways', fallback.gateways, true);
      this.#fallback = new MemoryStore();
    } else {
      this.#fallback = fallback;
    }
    this.timeLimited =
      this.#fallback === undefined ||
      this.#fallback instanceof MemoryStore ||
      this.#fallback.timeLimited === true;
    this.#inFlight = new InFlight(this.#timeoutMs, strandedAfterMs(this.#timeoutMs), (count) => {
      this.#pending -= count;
    });
    this.#logger = options.logger ?? console;
    if (typeof this.#logger?.warn !== 'function')
      throw new ConfigError('logger needs a warn(message) method');
    const mode = this.#fallback === undefined ? 'failing open' : 'answering from the in-process fallback';
    const threshold = breaker === false ? DEFAULT_BREAKER.failures : breaker.failures;
    this.#monitor = new FailureMonitor(this.#logger, threshold, mode);
    // An error listener of ours also stops the client from logging every failed reconnect: the store
    // reports the outage once, and the recovery once, through `logger`.
    this.#unwatch = this.#transport.watch(this.#watcher);
    if (this.#transport.state() === 'ready') this.#checkEviction();
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
    return this.#pending;
  }

  /** For readiness probes and metrics, without a round trip. */
  health(): StoreHealth {
    const breaker = this.#breaker?.state ?? 'closed';
    const since = this.#monitor.failingSince;
    const health = {
      connected: !this.#closed && this.#transport.state() === 'ready' && breaker !== 'open',
      breaker,
      pending: this.#pending,
    };
    return since === undefined ? health : { ...health, failingOpenSince: since };
  }

  async evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (checks.length === 0) return [];
    for (const check of checks) assertCheck(check);
    try {
      return await this.#guarded(now, () => this.#evaluateInRedis(checks, now));
    } catch (error) {
      const storeError = toStoreError(error);
      if (this.#fallback === undefined) throw storeError;
      const checksForFallback =
        this.#fallbackGateways > 1 ? scaleChecks(checks, this.#fallbackGateways) : checks;
      const results = await this.#fallback.evaluate(checksForFallback, now);
      const degraded = kindOf(storeError);
      return results.map((result) => ({ ...result, degraded }));
    }
  }

  async release(leases: readonly Lease[], now: number): Promise<void> {
    if (leases.length === 0) return;
    for (const lease of leases) assertSafeId(lease);
    await this.#fallback?.release(leases, now);
    const refunds = leases.filter((lease) => lease.refund);
    const held = leases.filter((lease) => !lease.refund);
    try {
      await this.#guarded(now, () =>
        Promise.all([
          held.length > 0 ? this.#releaseInRedis(held) : undefined,
          refunds.length > 0 ? this.#refundInRedis(refunds, now) : undefined,
        ]),
      );
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** Stops using Redis (the client stays open: it is yours) and closes the fallback. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unwatch();
    await this.#fallback?.close();
  }

  /** Runs one store operation through the breaker, the connection check and the bound on calls in flight. */
  async #guarded<T>(now: number, operation: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreError('ERR_SLUICE_STORE', 'RedisStore is closed');
    const breaker = this.#breaker;
    if (breaker !== undefined && !breaker.admit(now)) {
      throw new StoreError('ERR_SLUICE_BREAKER_OPEN', 'Redis skipped: breaker open after repeated failures');
    }
    try {
      if (this.#transport.state() === 'down') {
        throw new StoreError('ERR_SLUICE_STORE', 'Redis not connected (connection lost or closed)');
      }
      const result = await operation();
      breaker?.succeeded();
      this.#monitor.succeeded(now);
      return result;
    } catch (error) {
      if (error instanceof KeyStateError) {
        // Redis answered: one request's unreadable state is no reason to skip Redis for everyone.
        breaker?.succeeded();
        this.#monitor.succeeded(now);
      } else {
        breaker?.failed(now);
        const code = error instanceof StoreError ? error.code : 'ERR_SLUICE_STORE';
        this.#monitor.failed(now, this.#transport.state() === 'down' || breaker?.open === true, code);
      }
      throw error;
    }
  }

  #evaluateInRedis(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (!this.#transport.isCluster) return this.#submit(0, { checks, now });
    const groups = bySlot(checks);
    if (groups.length === 1) return this.#submit(slotOfTag(checks[0]!.tag), { checks, now });
    return this.#evaluateSlots(checks, now, groups);
  }

  /** A request whose checks span several Cluster slots: one group per slot, all sent at once. */
  async #evaluateSlots(checks: readonly Check[], now: number, groups: number[][]): Promise<CheckResult[]> {
    const answers = await Promise.allSettled(
      groups.map((indexes) =>
        this.#submit(slotOfTag(checks[indexes[0]!]!.tag), {
          checks: indexes.map((i) => checks[i]!),
          now,
        }),
      ),
    );
    const results: CheckResult[] = new Array(checks.length);
    let failure: unknown;
    groups.forEach((indexes, g) => {
      const answer = answers[g]!;
      if (answer.status === 'rejected') {
        failure ??= answer.reason;
        return;
      }
      indexes.forEach((checkIndex, j) => {
        results[checkIndex] = answer.value[j]!;
      });
    });
    this.#returnStrandedLeases(checks, groups, results, failure !== undefined);
    if (failure !== undefined) throw failure;
    return results;
  }

  /**
   * Queues one group for its target (slot) and counts it as pending until Redis answers. Without
   * coalescing it leaves at once, alone.
   */
  #submit(target: number, group: Group): Promise<CheckResult[]> {
    const refused = this.#countPending();
    if (refused !== undefined) return Promise.reject(refused);
    if (this.#coalescer !== undefined) return this.#coalescer.submit(target, group);
    return this.#sendOne(group);
  }

  async #sendOne(group: Group): Promise<CheckResult[]> {
    const [answer] = await this.#sendGroups([group], true);
    if (answer instanceof Error) throw answer;
    return answer!;
  }

  /** One script call for groups already counted as pending; they stop counting when Redis answers. */
  readonly #sendGroups = async (groups: readonly Group[], inTurn: boolean): Promise<GroupAnswer[]> => {
    let argv: (string | number)[];
    try {
      argv = evaluateArgv(groups, this.#settings);
    } catch (error) {
      this.#pending -= groups.length;
      throw error;
    }
    const reply = await this.#run(EVALUATE, argv, groups.length, inTurn);
    return parseReply(reply, groups);
  };

  /** Gives back the leases a request refused in another slot group would hold until they expire. */
  #returnStrandedLeases(
    checks: readonly Check[],
    groups: number[][],
    results: readonly (CheckResult | undefined)[],
    failed: boolean,
  ): void {
    const stranded = strandedLeases(checks, groups, results, failed);
    if (stranded.length > 0) this.#releaseInRedis(stranded).catch(() => {});
  }

  /** leaky_bucket places given back: checks of the refund fragment, one script call per slot group. */
  async #refundInRedis(refunds: readonly Lease[], now: number): Promise<void> {
    const checks = refundChecks(refunds);
    const groups = groupsFor(checks, this.#transport.isCluster);
    await Promise.all(
      groups.map((indexes) => {
        const refused = this.#countPending();
        if (refused !== undefined) return Promise.reject(refused);
        return this.#sendOne({ checks: indexes.map((i) => checks[i]!), now, refund: true });
      }),
    );
  }

  async #releaseInRedis(leases: readonly Lease[]): Promise<void> {
    const groups = groupsFor(leases, this.#transport.isCluster);
    await Promise.all(
      groups.map((indexes) => {
        const group = indexes.map((i) => leases[i]!);
        const { args, keys } = releaseCall(this.#prefix, group);
        const refused = this.#countPending();
        if (refused !== undefined) return Promise.reject(refused);
        return this.#run(RELEASE, args, 1, true).catch(async (error: unknown) => {
          if (!isWrongType(error)) throw error;
          throw await this.#repairLeaseKeys(group, keys);
        });
      }),
    );
  }

  /**
   * A release met a key of the wrong type: deletes the keys that are not a lease set (zset) or cost hash
   * as they should be, so that the rule counts afresh, and answers the error naming their rules. One
   * more round trip, on this rare path only.
   */
  async #repairLeaseKeys(leases: readonly Lease[], keys: readonly string[]): Promise<KeyStateError> {
    const types = await Promise.all(keys.map((key) => this.#transport.typeOf(key)));
    const bad = misTypedLeaseKeys(keys, types);
    await Promise.all(bad.map((key) => this.#transport.del(key)));
    return leaseStateError(leases, keys, bad);
  }

  /** Counts one more pending request, or returns the error that refuses it (beyond `maxPending`). */
  #countPending(): StoreError | undefined {
    if (this.#pending >= this.#maxPending) {
      return new StoreError('ERR_SLUICE_STORE', `${this.#pending} Redis requests already pending`);
    }
    this.#pending += 1;
    return undefined;
  }

  /**
   * Sends one script call with the time limit, for `counted` pending requests that stop counting when
   * Redis answers. `inTurn`: the call is made during the turn of its requests (see RedisTransport).
   */
  #run(script: RedisScript, args: ScriptArgs, counted: number, inTurn: boolean): Promise<unknown> {
    return this.#inFlight.track(this.#transport.runScript(script, args, inTurn), counted);
  }
}

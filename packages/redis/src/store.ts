import { createHash } from 'node:crypto';
import {
  type Check,
  type CheckResult,
  ConfigError,
  type Lease,
  MemoryStore,
  type Store,
  StoreError,
  type StoreErrorKind,
} from '@sluice/core';
import type { Cluster, Redis } from 'ioredis';
import { type LuaAlgorithm, leakyRefundLua, luaAlgorithms } from './algorithms/index.js';
import { Breaker, type BreakerOptions, DEFAULT_BREAKER } from './breaker.js';
import { ARGS_PER_CHECK, EVALUATE_SCRIPT, NEVER, RELEASE_SCRIPT, RESULTS_PER_CHECK } from './script.js';
import { slotOfTag } from './slot.js';

/** Where time comes from: the `now` the engine passes (`app`), or Redis `TIME` inside the script. */
export type RedisClock = 'app' | 'redis';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` (standalone or Sentinel) or `Cluster` you created; the store never quits it. */
  client: Redis | Cluster;
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
  /** Redis calls in flight at most; beyond it calls fail at once. Default {@link DEFAULT_MAX_PENDING}. */
  maxPending?: number;
  /**
   * Standalone Redis: script calls made in the same turn of the event loop leave in one socket write (the
   * socket is corked until the turn ends), so concurrent requests share system calls. Default true.
   * ioredis `enableAutoPipelining` does the same with more work per command; the bench measures both.
   */
  batchWrites?: boolean;
}

/**
 * Default time limit of a Redis call: 20 ms. The seed's gateway uses 5 ms against a Redis in the same
 * zone; 20 ms leaves room for a garbage-collection pause or a busy event loop before failing open.
 */
export const DEFAULT_TIMEOUT_MS = 20;

/** Default bound on Redis calls in flight (and so on what an outage can pile up in ioredis's queues). */
export const DEFAULT_MAX_PENDING = 1000;

/**
 * ioredis settings for a limiter's client: fail at once while disconnected instead of queueing (the store
 * also refuses to queue, see `maxPending`), give up on a command after one reconnection, and never
 * replay evaluations made for requests that were already decided. For a Cluster pass them as
 * `redisOptions` and set `enableOfflineQueue: false` on the Cluster too.
 */
export const recommendedRedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
} as const;

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown>;

/** Client states in which a command would only wait in ioredis's offline queue. */
const DISCONNECTED = new Set(['reconnecting', 'close', 'end', 'disconnecting']);
const SAFE_TAG = /^[A-Za-z0-9_-]{1,128}$/;
const SAFE_RULE = /^[A-Za-z0-9_.-]{1,128}$/;

function commandName(kind: string, script: string): string {
  return `sluice${kind}_${createHash('sha1').update(script).digest('hex').slice(0, 12)}`;
}

/** `<prefix>:{<tag>}:<rule>:<suffix>`: the tag (a hash) is the Cluster hash tag. */
function keyOf(prefix: string, id: { rule: string; tag: string }, suffix: string): string {
  return `${prefix}:{${id.tag}}:${id.rule}:${suffix}`;
}

function assertSafeId(id: { rule: string; tag: string }): void {
  if (!SAFE_TAG.test(id.tag))
    throw new ConfigError('check tag must be a hash (base64url), as tagFor() makes');
  if (!SAFE_RULE.test(id.rule))
    throw new ConfigError(`rule name not usable in a key: ${JSON.stringify(id.rule)}`);
}

function kindOf(error: StoreError): StoreErrorKind {
  if (error.code === 'ERR_SLUICE_STORE_TIMEOUT') return 'timeout';
  if (error.code === 'ERR_SLUICE_BREAKER_OPEN') return 'breaker_open';
  return 'error';
}

function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_SLUICE_STORE', `Redis call failed: ${message}`, { cause: error });
}

/** Groups items by the Cluster slot of their tag, keeping their positions. */
function bySlot<T extends { tag: string }>(items: readonly T[]): number[][] {
  const groups = new Map<number, number[]>();
  items.forEach((item, index) => {
    const slot = slotOfTag(item.tag);
    const group = groups.get(slot);
    if (group === undefined) groups.set(slot, [index]);
    else group.push(index);
  });
  return [...groups.values()];
}

function parseReply(reply: unknown, count: number): CheckResult[] {
  if (!Array.isArray(reply) || reply.length !== count * RESULTS_PER_CHECK) {
    throw new StoreError('ERR_SLUICE_STORE', 'unexpected reply from the Sluice script');
  }
  const results: CheckResult[] = new Array(count);
  for (let i = 0, at = 0; i < count; i++, at += RESULTS_PER_CHECK) {
    const retry = Number(reply[at + 4]);
    const delay: unknown = reply[at + 5];
    const allowed = reply[at] === 1;
    const limit = Number(reply[at + 1]);
    const remaining = Number(reply[at + 2]);
    const resetMs = Number(reply[at + 3]);
    const retryAfterMs = retry === NEVER ? Number.POSITIVE_INFINITY : retry;
    results[i] =
      delay === ''
        ? { allowed, limit, remaining, resetMs, retryAfterMs }
        : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs: Number(delay) };
  }
  return results;
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
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #clock: RedisClock;
  readonly #timeoutMs: number;
  readonly #maxPending: number;
  readonly #breaker: Breaker | undefined;
  readonly #fallback: Store | undefined;
  readonly #fallbackGateways: number;
  readonly #evaluateCommand = commandName('Evaluate', EVALUATE_SCRIPT);
  readonly #releaseCommand = commandName('Release', RELEASE_SCRIPT);
  readonly #batchWrites: boolean;
  #pending = 0;
  #closed = false;
  /** The socket corked for this turn of the event loop, if any. */
  #corked: { uncork(): void } | undefined;
  readonly #uncork = () => {
    const stream = this.#corked;
    this.#corked = undefined;
    stream?.uncork();
  };

  constructor(options: RedisStoreOptions) {
    const { client } = options;
    if (typeof client?.defineCommand !== 'function') {
      throw new ConfigError('RedisStore needs an ioredis Redis or Cluster client');
    }
    this.#client = client;
    this.#prefix = options.prefix ?? 'sluice';
    if (!/^[^{}\s]{1,64}$/.test(this.#prefix)) {
      throw new ConfigError('prefix must be 1-64 characters without braces or whitespace');
    }
    this.#clock = options.clock ?? 'app';
    if (this.#clock !== 'app' && this.#clock !== 'redis')
      throw new ConfigError("clock must be 'app' or 'redis'");
    this.#timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#maxPending = positive('maxPending', options.maxPending ?? DEFAULT_MAX_PENDING, true);
    this.#batchWrites = options.batchWrites ?? true;
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
    client.defineCommand(this.#evaluateCommand, { lua: EVALUATE_SCRIPT });
    client.defineCommand(this.#releaseCommand, { lua: RELEASE_SCRIPT });
  }

  /** Redis calls sent and not yet answered (including those that already timed out here). */
  get pending(): number {
    return this.#pending;
  }

  async evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (checks.length === 0) return [];
    for (const check of checks) {
      assertSafeId(check);
      if (luaAlgorithms[check.algorithm] === undefined) {
        throw new ConfigError(`unknown algorithm ${JSON.stringify(check.algorithm)}`);
      }
    }
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
      if (DISCONNECTED.has(this.#client.status)) {
        throw new StoreError('ERR_SLUICE_STORE', `Redis not connected (${this.#client.status})`);
      }
      const result = await operation();
      breaker?.succeeded();
      return result;
    } catch (error) {
      breaker?.failed(now);
      throw error;
    }
  }

  async #evaluateInRedis(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (!this.#client.isCluster) return this.#evaluateCall(checks, now);
    const groups = bySlot(checks);
    if (groups.length === 1) return this.#evaluateCall(checks, now);
    const answers = await Promise.all(
      groups.map((indexes) =>
        this.#evaluateCall(
          indexes.map((i) => checks[i]!),
          now,
        ),
      ),
    );
    const results: CheckResult[] = new Array(checks.length);
    groups.forEach((indexes, g) => {
      indexes.forEach((checkIndex, j) => {
        results[checkIndex] = answers[g]![j]!;
      });
    });
    this.#returnStrandedLeases(checks, groups, results);
    return results;
  }

  /**
   * Slot groups commit independently. When an enforcing check denies in one group, leases taken in groups
   * that committed would be held until they expire although the request is refused: give them back.
   * (Counters of other algorithms in those groups keep the denied request's cost; the README says so.)
   */
  #returnStrandedLeases(checks: readonly Check[], groups: number[][], results: readonly CheckResult[]): void {
    const deniedIn = (indexes: number[]) =>
      indexes.some((i) => checks[i]!.mode === 'enforce' && !results[i]!.allowed);
    if (!groups.some(deniedIn)) return;
    const stranded: Lease[] = [];
    for (const indexes of groups) {
      if (deniedIn(indexes)) continue;
      for (const i of indexes) {
        const { rule, tag, leaseId } = checks[i]!;
        if (leaseId !== undefined && results[i]!.allowed)
          stranded.push({ rule, tag, id: leaseId, scope: 'store' });
      }
    }
    if (stranded.length > 0) this.#releaseInRedis(stranded).catch(() => {});
  }

  /** leaky_bucket places given back: checks of the refund fragment, one script call per slot group. */
  async #refundInRedis(refunds: readonly Lease[], now: number): Promise<void> {
    const checks: Check[] = refunds.map(({ rule, tag, refund }) => ({
      rule,
      tag,
      algorithm: 'leaky_bucket',
      params: refund!.params,
      cost: refund!.cost,
      mode: 'shadow',
    }));
    const groups = this.#client.isCluster ? bySlot(checks) : [checks.map((_, i) => i)];
    await Promise.all(
      groups.map((indexes) =>
        this.#evaluateCall(
          indexes.map((i) => checks[i]!),
          now,
          () => leakyRefundLua,
        ),
      ),
    );
  }

  async #evaluateCall(
    checks: readonly Check[],
    now: number,
    fragmentOf: (check: Check) => LuaAlgorithm = (check) => luaAlgorithms[check.algorithm],
  ): Promise<CheckResult[]> {
    let keyCount = 0;
    for (const check of checks) keyCount += fragmentOf(check).keys.length;
    // numkeys, KEYS, then ARGV: built in one array, sent as is.
    const argv: (string | number)[] = [keyCount];
    const args: (string | number)[] = [this.#clock === 'redis' ? '' : String(now), checks.length];
    for (const check of checks) {
      const algorithm = fragmentOf(check);
      for (const suffix of algorithm.keys) argv.push(keyOf(this.#prefix, check, suffix));
      const { limit, windowMs, burst } = check.params;
      args.push(
        algorithm.code,
        check.mode === 'enforce' ? '1' : '0',
        limit,
        windowMs,
        burst,
        check.cost,
        algorithm.extra(check),
      );
    }
    if (args.length !== 2 + checks.length * ARGS_PER_CHECK) throw new Error('argument layout mismatch');
    for (const arg of args) argv.push(arg);
    const reply = await this.#run(this.#evaluateCommand, argv);
    return parseReply(reply, checks.length);
  }

  async #releaseInRedis(leases: readonly Lease[]): Promise<void> {
    const groups = this.#client.isCluster ? bySlot(leases) : [leases.map((_, i) => i)];
    const [setSuffix, costSuffix] = luaAlgorithms.concurrency.keys;
    await Promise.all(
      groups.map((indexes) => {
        const group = indexes.map((i) => leases[i]!);
        const keys = group.flatMap((lease) => [
          keyOf(this.#prefix, lease, setSuffix!),
          keyOf(this.#prefix, lease, costSuffix!),
        ]);
        return this.#run(this.#releaseCommand, [keys.length, ...keys, ...group.map((lease) => lease.id)]);
      }),
    );
  }

  /**
   * Sends one script call (`argv`: numkeys, keys, args) with the time limit; it counts as pending until
   * Redis answers.
   */
  #run(command: string, argv: readonly (string | number)[]): Promise<unknown> {
    if (this.#pending >= this.#maxPending) {
      return Promise.reject(
        new StoreError('ERR_SLUICE_STORE', `${this.#pending} Redis calls already pending`),
      );
    }
    const send = (this.#client as unknown as Record<string, ScriptCommand>)[command]!;
    this.#corkForThisTurn();
    this.#pending += 1;
    return withTimeout(send.apply(this.#client, argv as (string | number)[]), this.#timeoutMs, () => {
      this.#pending -= 1;
    });
  }

  /** Holds this turn's writes in the socket until the turn ends: one write for every call made meanwhile. */
  #corkForThisTurn(): void {
    if (!this.#batchWrites || this.#corked !== undefined || this.#client.isCluster) return;
    // Only a live connection: commands sent while (re)connecting wait in ioredis's queues, not the socket.
    if (this.#client.status !== 'ready') return;
    const stream = (this.#client as Redis).stream as { cork?(): void; uncork(): void } | undefined;
    if (typeof stream?.cork !== 'function') return;
    stream.cork();
    this.#corked = stream;
    setImmediate(this.#uncork);
  }
}

/**
 * Rejects with ERR_SLUICE_STORE_TIMEOUT after `ms`. The rejection waits one more turn of the event loop
 * (setImmediate runs after pending I/O), so a reply already sitting in the socket when the timer fires
 * on a busy process still counts. The timer never keeps the process alive. `settled` runs when Redis
 * answers, in time or not.
 */
function withTimeout<T>(promise: Promise<T>, ms: number, settled: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      setImmediate(() =>
        reject(new StoreError('ERR_SLUICE_STORE_TIMEOUT', `Redis did not answer within ${ms} ms`)),
      );
    }, ms);
    timer.unref();
    promise.then(
      (value) => {
        settled();
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        settled();
        clearTimeout(timer);
        reject(toStoreError(error));
      },
    );
  });
}

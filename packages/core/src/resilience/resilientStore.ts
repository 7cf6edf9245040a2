import { ConfigError, StoreError, storeErrorKind } from '../base/errors.js';
import type { NoticeLogger } from '../base/notices.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { Check, CheckResult, Lease, Store, StoreHealth } from '../store/contract.js';
import { answersInProcess } from '../store/inProcess.js';
import { MemoryStore } from '../store/memory.js';
import { Breaker, type BreakerOptions, DEFAULT_BREAKER } from './breaker.js';
import { scaleChecks } from './fallback.js';
import { toStoreError } from './inflight.js';
import { FailureMonitor } from './monitor.js';
import { PendingBoundError, PendingCalls, positive } from './pending.js';

/**
 * A remote store's connection: `ready`; `connecting` for the first time (calls wait in the client's
 * queue); `down`, lost or closed (calls would only wait for a reconnect, so they fail at once).
 */
export type ConnectionState = 'ready' | 'connecting' | 'down';

/** Options of {@link resilientStore}. */
export interface ResilienceOptions {
  /** Names the store in errors and notices (`Redis`). Default `remote`. */
  readonly name?: string;
  /** Time limit of each call, ms, when the wrapper tracks the calls (no `calls`). Default 20. */
  readonly timeoutMs?: number;
  /**
   * The time limit while the store has answered every call, when the wrapper tracks the calls (see
   * PendingCalls): a busy store is waited for this long, a hung one gets `timeoutMs`. Default `timeoutMs`.
   */
  readonly maxTimeoutMs?: number;
  /** Requests waiting at most, when the wrapper tracks the calls (no `calls`); `false`: no bound. Default 1000. */
  readonly maxPending?: number | false;
  /** Skip the store for `cooldownMs` after `failures` consecutive failed calls; `false` disables. */
  readonly breaker?: BreakerOptions | false;
  /**
   * While the store fails: `{gateways: N}` counts in an in-process MemoryStore with each limit divided by
   * N (rounded up, at least 1), or your own Store. Its answers are marked `degraded`. Default: none (throw).
   */
  readonly fallback?: { readonly gateways: number } | Store;
  /** Where the unreachable and recovered notices go, one line each. Default `console`. */
  readonly logger?: NoticeLogger;
  /**
   * The store's own call tracking: the store reserves a slot per request and tracks each call it sends
   * on it (one timer per call however many requests share it), and the wrapper adds none. Without it
   * the wrapper tracks each evaluate() and release() itself (`timeoutMs`, `maxPending`).
   */
  readonly calls?: PendingCalls;
  /** The connection's state, read per call and by health(). Default: always `ready`. */
  readonly connection?: () => ConnectionState;
  /**
   * Errors after which the store did answer (one request's unreadable state): the request fails, but
   * the breaker and the notices count the store as reachable. Default: none.
   */
  readonly answered?: (error: unknown) => boolean;
}

/** A store wrapped by {@link resilientStore}. */
export interface ResilientStore extends Store {
  /** True unless a fallback store of yours may take longer than the time limit. */
  readonly timeLimited: boolean;
  /** Requests waiting for the store (including those already timed out here): what `maxPending` bounds. */
  readonly pending: number;
  /** The time limit of a call sent now, ms. */
  readonly timeoutMs: number;
  health(): StoreHealth;
  /** Renews held leases in the wrapped store (nothing when it has no `renew`); see Store.renew. */
  renew(leases: readonly Lease[], now: number): Promise<number | undefined>;
  /** Tells the wrapper an error the client reported (a failed reconnect), to name it in the notice. */
  clientError(error: Error): void;
  /** Tells the wrapper the client's connection is (back) up: an open breaker probes with the next call. */
  connectionReady(): void;
}

const RESILIENCE_OPTIONS: readonly (keyof ResilienceOptions)[] = [
  'name',
  'timeoutMs',
  'maxTimeoutMs',
  'maxPending',
  'breaker',
  'fallback',
  'logger',
  'calls',
  'connection',
  'answered',
];

const ALWAYS_READY = (): ConnectionState => 'ready';
const NEVER_ANSWERED = (): boolean => false;

/**
 * Timeout, breaker, in-process fallback, bound on pending calls and settle-once, around any remote
 * store: every call settles once within the time limit; after repeated failures the breaker skips the
 * store for a cool-down; meanwhile the fallback (if any) answers, marked degraded.
 */
export function resilientStore(store: Store, options: ResilienceOptions = {}): ResilientStore {
  return new Resilient(store, options);
}

/**
 * What the engine puts around its stores: `store` itself when it needs nothing (it answers in process, as
 * MemoryStore does, or bounds its own calls, `timeLimited`, as RedisStore and wrapped stores do), else
 * {@link resilientStore}.
 */
export function withResilience(store: Store, options: ResilienceOptions = {}): Store {
  if (answersInProcess(store) || store.timeLimited === true) return store;
  return resilientStore(store, options);
}

class Resilient implements ResilientStore {
  readonly #store: Store;
  readonly #name: string;
  readonly #breaker: Breaker | undefined;
  readonly #fallback: Store | undefined;
  readonly #fallbackGateways: number;
  readonly #calls: PendingCalls;
  /** True when the store tracks its own calls on #calls. */
  readonly #tracksItself: boolean;
  readonly #connection: () => ConnectionState;
  readonly #answered: (error: unknown) => boolean;
  readonly #monitor: FailureMonitor;
  readonly timeLimited: boolean;
  #closed = false;

  constructor(store: Store, options: ResilienceOptions) {
    checkOptionNames('resilientStore', options, RESILIENCE_OPTIONS);
    this.#store = store;
    this.#name = options.name ?? 'remote';
    this.#tracksItself = options.calls !== undefined;
    this.#calls =
      options.calls ??
      new PendingCalls({
        timeoutMs: options.timeoutMs,
        maxTimeoutMs: options.maxTimeoutMs,
        maxPending: options.maxPending,
        name: this.#name,
      });
    const breaker = options.breaker ?? DEFAULT_BREAKER;
    if (breaker !== false) {
      checkOptionNames('breaker', breaker, ['failures', 'cooldownMs'] satisfies (keyof BreakerOptions)[]);
      positive('breaker.failures', breaker.failures, true);
      positive('breaker.cooldownMs', breaker.cooldownMs);
      this.#breaker = new Breaker(breaker);
    }
    const fallback = options.fallback;
    this.#fallbackGateways = 1;
    if (fallback !== undefined && 'gateways' in fallback) {
      checkOptionNames('fallback', fallback, ['gateways']);
      this.#fallbackGateways = positive('fallback.gateways', fallback.gateways, true);
      this.#fallback = new MemoryStore();
    } else {
      this.#fallback = fallback;
    }
    this.timeLimited =
      this.#fallback === undefined || answersInProcess(this.#fallback) || this.#fallback.timeLimited === true;
    this.#connection = options.connection ?? ALWAYS_READY;
    this.#answered = options.answered ?? NEVER_ANSWERED;
    const logger = options.logger ?? console;
    if (typeof logger?.warn !== 'function') throw new ConfigError('logger needs a warn(message) method');
    const mode = this.#fallback === undefined ? 'failing open' : 'answering from the in-process fallback';
    const threshold = breaker === false ? DEFAULT_BREAKER.failures : breaker.failures;
    this.#monitor = new FailureMonitor(logger, threshold, mode, this.#name);
  }

  get pending(): number {
    return this.#calls.count;
  }

  get timeoutMs(): number {
    return this.#calls.timeoutMs;
  }

  health(): StoreHealth {
    const breaker = this.#breaker?.state ?? 'closed';
    const since = this.#monitor.failingSince;
    const health = {
      connected: !this.#closed && this.#connection() === 'ready' && breaker !== 'open',
      breaker,
      pending: this.#calls.count,
    };
    return since === undefined ? health : { ...health, failingOpenSince: since };
  }

  clientError(error: Error): void {
    this.#monitor.clientError(error);
  }

  connectionReady(): void {
    this.#breaker?.probeNow();
  }

  async evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (checks.length === 0) return [];
    try {
      return await this.#guarded(now, () => this.#store.evaluate(checks, now));
    } catch (error) {
      const storeError = toStoreError(error, this.#name);
      if (this.#fallback === undefined) throw storeError;
      const checksForFallback =
        this.#fallbackGateways > 1 ? scaleChecks(checks, this.#fallbackGateways) : checks;
      const results = await this.#fallback.evaluate(checksForFallback, now);
      const degraded = storeErrorKind(storeError);
      return results.map((result) => ({ ...result, degraded }));
    }
  }

  async release(leases: readonly Lease[], now: number): Promise<void> {
    if (leases.length === 0) return;
    await this.#fallback?.release(leases, now);
    try {
      await this.#guarded(now, () => this.#store.release(leases, now));
    } catch (error) {
      throw toStoreError(error, this.#name);
    }
  }

  /**
   * Renews held leases in the store (and the fallback, which holds those taken while it answered); resolves
   * with the leases the store no longer held, or nothing with a fallback (a lease held by either is missing
   * in the other, so a count cannot tell which are gone).
   */
  async renew(leases: readonly Lease[], now: number): Promise<number | undefined> {
    if (leases.length === 0) return 0;
    await this.#fallback?.renew?.(leases, now);
    const store = this.#store;
    if (store.renew === undefined) return undefined;
    try {
      const missing = await this.#guarded(now, () => store.renew!(leases, now));
      return this.#fallback === undefined && typeof missing === 'number' ? missing : undefined;
    } catch (error) {
      throw toStoreError(error, this.#name);
    }
  }

  /** Stops using the store, closes it and the fallback. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#store.close();
    await this.#fallback?.close();
  }

  /** Sends a call: as it is when the store tracks itself, else reserved first and tracked here. */
  #send<T>(send: () => Promise<T>): Promise<T> {
    if (this.#tracksItself) return send();
    const refused = this.#calls.reserve();
    if (refused !== undefined) return Promise.reject(refused);
    let sent: Promise<T>;
    try {
      sent = send();
    } catch (error) {
      this.#calls.unreserve(1);
      return Promise.reject(error);
    }
    return this.#calls.track(sent, 1);
  }

  #skipped: StoreError | undefined;

  #breakerOpen(): StoreError {
    this.#skipped ??= new StoreError(
      'ERR_SLUICE_BREAKER_OPEN',
      `${this.#name} skipped: breaker open after repeated failures`,
    );
    return this.#skipped;
  }

  /** Runs one store operation through the breaker, the connection check and the bound on calls. */
  async #guarded<T>(now: number, operation: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreError('ERR_SLUICE_STORE', `${this.#name} store is closed`);
    const breaker = this.#breaker;
    // One error for every call the open breaker skips: a stack trace per request made each fail-open
    // episode cost more server CPU than waiting for the store would have.
    if (breaker !== undefined && !breaker.admit(now)) throw this.#breakerOpen();
    try {
      if (this.#connection() === 'down') {
        throw new StoreError('ERR_SLUICE_STORE', `${this.#name} not connected (connection lost or closed)`);
      }
      const result = await this.#send(operation);
      breaker?.succeeded();
      this.#monitor.succeeded(now);
      return result;
    } catch (error) {
      if (error instanceof PendingBoundError) {
        // Behind, not down: opening the breaker would fail every request open, not just the excess.
        this.#monitor.busy(now, error);
      } else if (this.#answered(error)) {
        // The store answered: one request's unreadable state is no reason to skip it for everyone.
        breaker?.succeeded();
        this.#monitor.succeeded(now);
      } else {
        breaker?.failed(now);
        const code = error instanceof StoreError ? error.code : 'ERR_SLUICE_STORE';
        this.#monitor.failed(now, this.#connection() === 'down' || breaker?.open === true, code);
      }
      throw error;
    }
  }
}

import type { StoreOutcome } from './decision.js';
import { StoreError } from './errors.js';
import type { GuardedObserver } from './observe/guarded.js';
import type { PlannedCheck } from './plan.js';
import { MemoryStore } from './stores/memory.js';
import type { Check, CheckResult, Store, StoreErrorKind } from './types.js';

/** A value now, or later. */
export type Maybe<T> = T | Promise<T>;

/** Whether a Maybe is still to come. */
export function isPromise<T>(value: Maybe<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** The outcome of a store call with nothing to evaluate. */
const NOTHING_DONE: StoreOutcome = Object.freeze({
  ok: true,
  results: Object.freeze([]),
}) as StoreOutcome;

/**
 * One store as the engine calls it: an in-process MemoryStore answers synchronously (no promise, no timer);
 * any other store is awaited under a backstop timeout, unless it bounds its own calls (`timeLimited`).
 * Failures become outcomes, reported once to the observer: a store never makes a check reject.
 */
export class StoreCaller {
  readonly #store: Store;
  readonly #memory: MemoryStore | undefined;
  readonly #timeoutMs: number | undefined;
  readonly #observer: GuardedObserver;
  readonly #onFailure: (error: unknown) => StoreOutcome;

  constructor(store: Store, timeoutMs: number, observer: GuardedObserver) {
    this.#store = store;
    this.#memory = store instanceof MemoryStore ? store : undefined;
    this.#timeoutMs = store.timeLimited === true ? undefined : timeoutMs;
    this.#observer = observer;
    this.#onFailure = (error) => this.failed(error);
  }

  /** The outcome of evaluating these checks; a scope with no checks makes no call. */
  outcome(planned: readonly PlannedCheck[], now: number): Maybe<StoreOutcome> {
    if (planned.length === 0) return NOTHING_DONE;
    const checks: Check[] = new Array(planned.length);
    for (let i = 0; i < planned.length; i++) checks[i] = planned[i]!.check;
    try {
      if (this.#memory !== undefined) return { ok: true, results: this.#memory.evaluateNow(checks, now) };
      return this.#remote(this.#store.evaluate(checks, now));
    } catch (error) {
      return this.failed(error);
    }
  }

  /** A failure as an outcome, told to the observer. */
  failed(error: unknown): StoreOutcome {
    const kind = errorKind(error);
    this.#observer.onStoreError(kind, error instanceof Error ? error : new Error(String(error)));
    return { ok: false, kind };
  }

  #remote(call: Promise<CheckResult[]>): Promise<StoreOutcome> {
    const observer = this.#observer;
    const started = observer.timesStore ? performance.now() : 0;
    const bounded = this.#timeoutMs === undefined ? call : withTimeout(call, this.#timeoutMs);
    return bounded.then((results): StoreOutcome => {
      if (observer.timesStore) observer.onStoreLatency((performance.now() - started) / 1000);
      return { ok: true, results };
    }, this.#onFailure);
  }
}

function errorKind(error: unknown): StoreErrorKind {
  if (error instanceof StoreError) {
    if (error.code === 'ERR_SLUICE_STORE_TIMEOUT') return 'timeout';
    if (error.code === 'ERR_SLUICE_BREAKER_OPEN') return 'breaker_open';
  }
  return 'error';
}

/** Rejects with ERR_SLUICE_STORE_TIMEOUT after `ms`; one promise and one unref'd timer per call. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreError('ERR_SLUICE_STORE_TIMEOUT', `store call over ${ms} ms`)),
      ms,
    );
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

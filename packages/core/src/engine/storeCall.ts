import { storeErrorKind } from '../base/errors.js';
import type { Maybe } from '../base/maybe.js';
import type { GuardedObserver } from '../observe/guarded.js';
import type { Check, CheckResult, Store } from '../store/contract.js';
import { answersInProcess, type InProcessStore } from '../store/inProcess.js';
import type { StoreOutcome } from './decision.js';
import type { PlannedCheck } from './plan.js';

export { isPromise, isThenable, type Maybe } from '../base/maybe.js';
export { answersInProcess, type InProcessStore };

/** The outcome of a store call with nothing to evaluate. */
export const NOTHING_DONE: StoreOutcome = Object.freeze({
  ok: true,
  results: Object.freeze([]),
}) as StoreOutcome;

/**
 * One store as the engine calls it: a store that answers in process synchronously (no promise, no timer);
 * any other is awaited (the engine has put a time limit around it, see `withResilience`). Failures become
 * outcomes, reported once to the observer: a store never makes a check reject.
 */
export class StoreCaller {
  readonly #store: Store;
  readonly #inProcess: InProcessStore | undefined;
  readonly #observer: GuardedObserver;
  readonly #onFailure: (error: unknown) => StoreOutcome;
  readonly #clock: () => number;
  #pending = 0;
  #failingSince: number | undefined;

  constructor(store: Store, observer: GuardedObserver, clock: () => number = Date.now) {
    this.#store = store;
    this.#inProcess = answersInProcess(store) ? store : undefined;
    this.#observer = observer;
    this.#clock = clock;
    this.#onFailure = (error) => {
      this.#pending--;
      return this.failed(error);
    };
  }

  /** The store, when it answers in process (then a call needs no promise); undefined otherwise. */
  get inProcess(): InProcessStore | undefined {
    return this.#inProcess;
  }

  /** Calls sent to a remote store and not yet settled, as the engine sees them. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Epoch ms (limiter clock) of the first failed or degraded call since the store last answered normally;
   * undefined while it answers.
   */
  get failingSince(): number | undefined {
    return this.#failingSince;
  }

  /** The outcome of evaluating these checks; a scope with no checks makes no call. */
  outcome(planned: readonly PlannedCheck[], now: number): Maybe<StoreOutcome> {
    if (planned.length === 0) return NOTHING_DONE;
    const checks: Check[] = new Array(planned.length);
    for (let i = 0; i < planned.length; i++) checks[i] = planned[i]!.check;
    try {
      if (this.#inProcess !== undefined)
        return { ok: true, results: this.#inProcess.evaluateNow(checks, now) };
      return this.#remote(this.#store.evaluate(checks, now));
    } catch (error) {
      return this.failed(error);
    }
  }

  /** A failure as an outcome, told to the observer. */
  failed(error: unknown): StoreOutcome {
    this.#failingSince ??= this.#clock();
    const kind = storeErrorKind(error);
    this.#observer.onStoreError(kind, error instanceof Error ? error : new Error(String(error)));
    return { ok: false, kind };
  }

  #remote(call: Promise<CheckResult[]>): Promise<StoreOutcome> {
    const observer = this.#observer;
    const started = observer.timesStore ? performance.now() : 0;
    this.#pending++;
    return call.then((results): StoreOutcome => {
      this.#pending--;
      if (observer.timesStore) observer.onStoreLatency((performance.now() - started) / 1000);
      // A store's fallback answers in place of the store: still failing open.
      if (results[0]?.degraded !== undefined) this.#failingSince ??= this.#clock();
      else this.#failingSince = undefined;
      return { ok: true, results };
    }, this.#onFailure);
  }
}

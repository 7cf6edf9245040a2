import { ConfigError, StoreError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import { InFlight } from './inflight.js';
import { DEFAULT_STALL_MS } from './progress.js';
import { TimeLimit } from './timeLimit.js';

/**
 * A request refused at the bound on pending requests: the store is behind, not unreachable (its calls are
 * still being answered), so the breaker and the unreachable notice do not count it (see FailureMonitor.busy).
 */
export class PendingBoundError extends StoreError {
  constructor(count: number, name: string) {
    super('ERR_SLUICE_STORE', `${count} ${name} requests already pending`);
    this.name = 'PendingBoundError';
  }
}

/** Default time limit of a remote store call, ms (Redis's: see @sluice/redis). */
export const DEFAULT_TIMEOUT_MS = 20;

/** Default bound on requests waiting for a remote store (and so on what an outage can pile up in its client). */
export const DEFAULT_MAX_PENDING = 1000;

/**
 * How long after its time limit a call unanswered on a live connection keeps its pending slot: the
 * larger of 1 s and 10 time limits. A store that is only slow answers well within it; a command that the
 * client lost without settling it frees its slot then at the latest.
 */
export function strandedAfterMs(timeoutMs: number): number {
  return Math.max(1000, 10 * timeoutMs);
}

/** A positive number (or integer) option, or a ConfigError naming it. */
export function positive(name: string, value: number, integer = false): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
  }
  return value;
}

/** Options of {@link PendingCalls}. */
export interface PendingCallsOptions {
  /**
   * Time limit of each call, ms; with `maxTimeoutMs` above it, the limit while the store is suspected hung
   * (calls were given up, and nothing has answered since). Default {@link DEFAULT_TIMEOUT_MS}.
   */
  readonly timeoutMs?: number;
  /**
   * The time limit while the store keeps answering (see {@link TimeLimit}): a busy store is waited for this
   * long, as long as some call comes back at least every `stallMs`; once calls are given up, new ones get
   * `timeoutMs` until an answer comes back. Default `timeoutMs` (a fixed limit).
   */
  readonly maxTimeoutMs?: number;
  /**
   * With `maxTimeoutMs` above `timeoutMs`: how long calls may wait with no answer from the store in between
   * before they are all given up (a hung store, not a busy one: see Progress). Default {@link DEFAULT_STALL_MS}.
   */
  readonly stallMs?: number;
  /**
   * Requests counted at most; beyond it they are refused at once. `false`: no bound (they are still
   * counted). Default {@link DEFAULT_MAX_PENDING}.
   */
  readonly maxPending?: number | false;
  /** Names the store in errors (`Redis`). Default `store`. */
  readonly name?: string;
}

/**
 * The requests a remote store has queued or sent and not yet seen answered, bounded: a request counts
 * from `reserve()` until the call that carries it settles (after its time limit too), its connection is
 * lost, or at the latest {@link strandedAfterMs} after its time limit. Several requests may share one call
 * (`track(call, n)`): one timer per call, not per request.
 */
export class PendingCalls {
  readonly #limit: TimeLimit;
  readonly #max: number;
  readonly #name: string;
  readonly #inFlight: InFlight;
  #count = 0;

  constructor(options: PendingCallsOptions = {}) {
    checkOptionNames('PendingCalls', options, [
      'timeoutMs',
      'maxTimeoutMs',
      'stallMs',
      'maxPending',
      'name',
    ] satisfies (keyof PendingCallsOptions)[]);
    const timeoutMs = positive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const maxTimeoutMs = positive('maxTimeoutMs', options.maxTimeoutMs ?? timeoutMs);
    if (maxTimeoutMs < timeoutMs) {
      throw new ConfigError(`maxTimeoutMs (${maxTimeoutMs}) must be at least timeoutMs (${timeoutMs})`);
    }
    this.#limit = new TimeLimit(timeoutMs, maxTimeoutMs);
    const max = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.#max = max === false ? Number.POSITIVE_INFINITY : positive('maxPending', max, true);
    this.#name = options.name ?? 'store';
    const stallMs = positive('stallMs', options.stallMs ?? DEFAULT_STALL_MS);
    this.#inFlight = new InFlight(
      this.#limit,
      strandedAfterMs(maxTimeoutMs),
      this.#free,
      this.#name,
      stallMs,
    );
  }

  /** The time limit of a call sent now, ms: `maxTimeoutMs`, or `timeoutMs` while the store is suspected hung. */
  get timeoutMs(): number {
    return this.#limit.ms;
  }

  /** Requests counted now. */
  get count(): number {
    return this.#count;
  }

  /** Counts one more request, or returns the error that refuses it (at the bound). */
  reserve(): StoreError | undefined {
    if (this.#count >= this.#max) {
      return new PendingBoundError(this.#count, this.#name);
    }
    this.#count += 1;
    return undefined;
  }

  /** Stops counting requests reserved for a call that was never sent. */
  unreserve(count: number): void {
    this.#count -= count;
  }

  /**
   * Follows a call carrying `count` reserved requests: settles once, within the time limit, or sooner when the
   * store stalls. `watched` false: it waits for something other than the store (see InFlight.track).
   */
  track<T>(sent: Promise<T>, count: number, watched = true): Promise<T> {
    return this.#inFlight.track(sent, count, watched);
  }

  /** The connection of every call in flight closed for good: each fails now and stops counting. */
  connectionLost(): void {
    this.#inFlight.connectionLost();
  }

  readonly #free = (count: number): void => {
    this.#count -= count;
  };
}

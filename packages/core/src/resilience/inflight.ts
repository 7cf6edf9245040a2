import { StoreError } from '../base/errors.js';
import { Progress } from './progress.js';
import { TimeLimit } from './timeLimit.js';

/** A call in flight, as the connection-loss handler and the progress watchdog see it. */
interface Flight {
  lost(error: StoreError): void;
  /** The store answered nothing for a while: the caller fails now, the slots wait for an answer or the backstop. */
  stalled(error: StoreError): void;
}

/** Any failure of a store call as a StoreError (kept as is when it already is one). */
export function toStoreError(error: unknown, name = 'store'): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_SLUICE_STORE', `${name} call failed: ${message}`, { cause: error });
}

/**
 * Calls sent to a remote store and not yet settled. Each call settles its caller exactly once, with the
 * first of: the answer, an error, its time limit, the loss of its connection, a stall of the store (see
 * {@link Progress}: with an adaptive limit, calls that waited `stallMs` with no answer from the store in
 * between are given up together, so a hung store costs a request `stallMs`, not the patient limit). Its
 * pending slots are freed exactly once, with the first of: the answer or an error from the client, the loss of
 * its connection, or `strandedMs` after it was given up. The last two matter because a client may drop a
 * command that was in flight on a connection that reset, settling it never (ioredis with
 * autoResendUnfulfilledCommands: false).
 */
export class InFlight {
  readonly #limit: TimeLimit;
  readonly #strandedMs: number;
  readonly #free: (count: number) => void;
  readonly #name: string;
  /** Watches for a stall; undefined with a fixed limit (or one no longer than `stallMs`). */
  readonly #progress: Progress | undefined;
  #calls = new Set<Flight>();

  /**
   * `limit`: a fixed time limit in ms, or a {@link TimeLimit} that every answer and timeout feeds. `free(n)`
   * gives back n pending slots; `name` names the store in errors (`Redis`); `stallMs`: how long calls may
   * wait with no answer from the store before they are given up, when the limit is adaptive.
   */
  constructor(
    limit: number | TimeLimit,
    strandedMs: number,
    free: (count: number) => void,
    name = 'store',
    stallMs?: number,
  ) {
    this.#limit = typeof limit === 'number' ? new TimeLimit(limit) : limit;
    this.#strandedMs = strandedMs;
    this.#free = free;
    this.#name = name;
    if (stallMs !== undefined && this.#limit.adaptive && stallMs < this.#limit.ceilingMs) {
      this.#progress = new Progress(stallMs, () => this.#stalled(stallMs));
    }
  }

  /** Calls sent and not yet answered, failed or given up. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Follows one call holding `counted` pending slots. The timeout rejection waits one more turn of the
   * event loop (setImmediate runs after pending I/O), so a reply already sitting in the socket when the
   * timer fires on a busy process still counts. No timer keeps the process alive. `watched` false: the call
   * waits for something other than the store's answer (a first connection, with a deadline of its own), so
   * the stall watchdog leaves it to its time limit.
   */
  track<T>(sent: Promise<T>, counted: number, watched = true): Promise<T> {
    const limit = this.#limit;
    const limitMs = limit.ms;
    const progress = watched ? this.#progress : undefined;
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      let freed = false;
      let backstop: NodeJS.Timeout | undefined;
      const fail = (error: StoreError) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        progress?.settled(false);
        reject(error);
      };
      const giveUp = (error: StoreError) => {
        if (answered) return;
        limit.timedOut();
        backstop = setTimeout(free, this.#strandedMs);
        backstop.unref();
        fail(error);
      };
      const flight: Flight = {
        lost: (error) => {
          free();
          fail(error);
        },
        stalled: (error) => {
          if (progress !== undefined && !answered) giveUp(error);
        },
      };
      const free = () => {
        if (freed) return;
        freed = true;
        clearTimeout(backstop);
        this.#calls.delete(flight);
        this.#free(counted);
      };
      const timer = setTimeout(() => {
        const error = new StoreError(
          'ERR_SLUICE_STORE_TIMEOUT',
          `${this.#name} did not answer within ${limitMs} ms`,
        );
        setImmediate(() => giveUp(error));
      }, limitMs);
      timer.unref();
      this.#calls.add(flight);
      progress?.waiting();
      sent.then(
        (value) => {
          free();
          limit.answered();
          this.#progress?.answered();
          if (answered) return;
          answered = true;
          clearTimeout(timer);
          progress?.settled(true);
          resolve(value);
        },
        (error: unknown) => {
          free();
          fail(toStoreError(error, this.#name));
        },
      );
    });
  }

  /**
   * The connection that carried every call in flight closed and its commands will not be sent again:
   * no answer can come, so each fails now and frees its slots.
   */
  connectionLost(): void {
    if (this.#calls.size === 0) return;
    const calls = this.#calls;
    this.#calls = new Set();
    const error = new StoreError('ERR_SLUICE_STORE', `connection to ${this.#name} closed before the answer`);
    for (const call of calls) call.lost(error);
  }

  /** Nothing answered for `stallMs` while calls waited: every watched call still waiting fails now. */
  #stalled(stallMs: number): void {
    const error = new StoreError(
      'ERR_SLUICE_STORE_TIMEOUT',
      `${this.#name} answered nothing for ${stallMs} ms`,
    );
    for (const call of [...this.#calls]) call.stalled(error);
  }
}

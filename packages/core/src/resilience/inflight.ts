import { StoreError } from '../base/errors.js';
import { TimeLimit } from './timeLimit.js';

/** A call in flight, as the connection-loss handler sees it. */
interface Flight {
  lost(error: StoreError): void;
}

/** Any failure of a store call as a StoreError (kept as is when it already is one). */
export function toStoreError(error: unknown, name = 'store'): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_SLUICE_STORE', `${name} call failed: ${message}`, { cause: error });
}

/**
 * Calls sent to a remote store and not yet settled. Each call settles its caller exactly once, with the
 * first of: the answer, an error, its time limit, the loss of its connection. Its pending slots are freed
 * exactly once, with the first of: the answer or an error from the client, the loss of its connection, or
 * `strandedMs` after its time limit. The last two matter because a client may drop a command that was in
 * flight on a connection that reset, settling it never (ioredis with autoResendUnfulfilledCommands: false).
 */
export class InFlight {
  readonly #limit: TimeLimit;
  readonly #strandedMs: number;
  readonly #free: (count: number) => void;
  readonly #name: string;
  #calls = new Set<Flight>();

  /**
   * `limit`: a fixed time limit in ms, or a {@link TimeLimit} that every answer and timeout feeds. `free(n)`
   * gives back n pending slots; `name` names the store in errors (`Redis`).
   */
  constructor(limit: number | TimeLimit, strandedMs: number, free: (count: number) => void, name = 'store') {
    this.#limit = typeof limit === 'number' ? new TimeLimit(limit) : limit;
    this.#strandedMs = strandedMs;
    this.#free = free;
    this.#name = name;
  }

  /** Calls sent and not yet answered, failed or given up. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Follows one call holding `counted` pending slots. The timeout rejection waits one more turn of the
   * event loop (setImmediate runs after pending I/O), so a reply already sitting in the socket when the
   * timer fires on a busy process still counts. No timer keeps the process alive.
   */
  track<T>(sent: Promise<T>, counted: number): Promise<T> {
    const limit = this.#limit;
    const limitMs = limit.ms;
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      let freed = false;
      let backstop: NodeJS.Timeout | undefined;
      const fail = (error: StoreError) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        reject(error);
      };
      const flight: Flight = {
        lost: (error) => {
          free();
          fail(error);
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
        limit.timedOut();
        backstop = setTimeout(free, this.#strandedMs);
        backstop.unref();
        const error = new StoreError(
          'ERR_SLUICE_STORE_TIMEOUT',
          `${this.#name} did not answer within ${limitMs} ms`,
        );
        setImmediate(() => fail(error));
      }, limitMs);
      timer.unref();
      this.#calls.add(flight);
      sent.then(
        (value) => {
          free();
          limit.answered();
          if (answered) return;
          answered = true;
          clearTimeout(timer);
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
}

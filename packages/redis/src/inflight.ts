import { StoreError } from '@sluice/core';
import { toStoreError } from './errors.js';

/** A call in flight, as the connection-loss handler sees it. */
interface Flight {
  lost(error: StoreError): void;
}

/**
 * Script calls sent to Redis and not yet settled. Each call settles its caller exactly once, with the
 * first of: the answer, an error, its time limit, the loss of its connection. Its pending slots are freed
 * exactly once, with the first of: the answer or an error from ioredis, the loss of its connection, or
 * `strandedMs` after its time limit. The last two matter because ioredis may drop a command that was in
 * flight on a connection that reset, settling it never (autoResendUnfulfilledCommands: false).
 */
export class InFlight {
  readonly #timeoutMs: number;
  readonly #strandedMs: number;
  readonly #free: (count: number) => void;
  #calls = new Set<Flight>();

  /** `free(n)` gives back n pending slots. */
  constructor(timeoutMs: number, strandedMs: number, free: (count: number) => void) {
    this.#timeoutMs = timeoutMs;
    this.#strandedMs = strandedMs;
    this.#free = free;
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
        backstop = setTimeout(free, this.#strandedMs);
        backstop.unref();
        const error = new StoreError(
          'ERR_SLUICE_STORE_TIMEOUT',
          `Redis did not answer within ${this.#timeoutMs} ms`,
        );
        setImmediate(() => fail(error));
      }, this.#timeoutMs);
      timer.unref();
      this.#calls.add(flight);
      sent.then(
        (value) => {
          free();
          if (answered) return;
          answered = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          free();
          fail(toStoreError(error));
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
    const error = new StoreError('ERR_SLUICE_STORE', 'connection to Redis closed before the answer');
    for (const call of calls) call.lost(error);
  }
}

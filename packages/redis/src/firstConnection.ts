import { StoreError } from '@sluice/core/store';

/**
 * Calls made before the client's first connection is up (`new Redis(url, recommendedRedisOptions)` and a
 * request at once) wait for it here rather than failing at once in a client that queues nothing. They share
 * one deadline, set by the first of them (its time limit): a connection that is not up by then is not coming
 * soon (a closed port, a wrong URL, Redis down at deploy), so every call waiting fails then, together, and
 * `gaveUp` stays true until the client is ready: the store then treats the connection as down, failing calls
 * at once instead of making each wait again. One timer in all, not one per call.
 */
export class FirstConnection {
  readonly #waiters = new Set<{ wake(): void; fail(error: StoreError): void }>();
  #timer: NodeJS.Timeout | undefined;
  #gaveUp = false;

  /** True once a wait for the first connection ran out, until the client is ready. */
  get gaveUp(): boolean {
    return this.#gaveUp;
  }

  /** The client became ready: every waiting call goes out, and later waits start afresh. */
  ready(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#gaveUp = false;
    for (const waiter of this.#waiters) waiter.wake();
    this.#waiters.clear();
  }

  /**
   * Resolves when the client is ready; rejects when the shared deadline passes (`timeoutMs` from the first
   * call waiting), or at once when an earlier wait already ran out.
   */
  wait(timeoutMs: number): Promise<void> {
    if (this.#gaveUp) return Promise.reject(notConnected());
    return new Promise((resolve, reject) => {
      this.#waiters.add({ wake: resolve, fail: reject });
      if (this.#timer !== undefined) return;
      this.#timer = setTimeout(() => this.#giveUp(timeoutMs), timeoutMs);
      this.#timer.unref?.();
    });
  }

  #giveUp(timeoutMs: number): void {
    this.#timer = undefined;
    this.#gaveUp = true;
    const error = new StoreError('ERR_SLUICE_STORE_TIMEOUT', `Redis not connected yet after ${timeoutMs} ms`);
    for (const waiter of this.#waiters) waiter.fail(error);
    this.#waiters.clear();
  }
}

function notConnected(): StoreError {
  return new StoreError('ERR_SLUICE_STORE', 'Redis not connected (no connection made yet)');
}

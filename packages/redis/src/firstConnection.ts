import { StoreError } from '@sluice/core/store';

/**
 * Calls made before the client's first connection is up (`new Redis(url, recommendedRedisOptions)` and a
 * request at once) wait for it here rather than failing at once in a client that queues nothing: within the
 * call's time limit, then they fail as a store error (the rule's `on_store_error` decides).
 */
export class FirstConnection {
  readonly #waiters = new Set<() => void>();

  /** The client became ready: every waiting call goes out. */
  ready(): void {
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** Resolves when the client is ready; rejects after `timeoutMs` if it is not. */
  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new StoreError('ERR_SLUICE_STORE_TIMEOUT', `Redis not connected yet after ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref?.();
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#waiters.add(wake);
    });
  }
}

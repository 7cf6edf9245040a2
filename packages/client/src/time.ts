/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (as fetch itself does). */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real wait: a timer, cleared when the signal aborts. */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

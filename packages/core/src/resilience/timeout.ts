/**
 * Rejects with `onTimeout()` after `ms` unless `promise` settles first; one promise and one unref'd timer per
 * call, so a bounded wait never keeps the process alive.
 */
export function withTimeout<T>(promise: PromiseLike<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
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

/** A value now, or later. */
export type Maybe<T> = T | Promise<T>;

/** Whether a Maybe made by Sluice (always a native promise when later) is still to come. */
export function isPromise<T>(value: Maybe<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** Whether a value from user code (a hook's return) will settle later: any thenable, not only a native promise. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

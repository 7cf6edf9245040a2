import { isThenable } from '../base/maybe.js';
import type { Observer } from './contract.js';

type Hook = (...args: never[]) => unknown;

/**
 * One Observer that calls several (metrics and logs, say) in order. Every hook any of them has is passed on,
 * including hooks beyond Observer's (an adapter's `onAdapterError`). A throwing or rejecting observer does not
 * keep the others from hearing the event; its failure is passed on once all have heard it (thrown, or as the
 * returned promise's rejection) so that the limiter counts it.
 */
export function combineObservers<O extends Observer>(...observers: readonly (O | undefined)[]): O {
  const present = observers.filter((observer): observer is O => observer !== undefined);
  const hooks = new Set(
    present.flatMap((observer) =>
      Object.keys(observer).filter(
        (name) => typeof (observer as Record<string, unknown>)[name] === 'function',
      ),
    ),
  );
  const combined: Record<string, Hook> = {};
  for (const name of hooks) {
    const listeners = present.filter(
      (observer) => typeof (observer as Record<string, unknown>)[name] === 'function',
    );
    combined[name] = (...args: never[]) => {
      let failure: { error: unknown } | undefined;
      let later: PromiseLike<unknown>[] | undefined;
      for (const observer of listeners) {
        try {
          const returned = ((observer as Record<string, unknown>)[name] as Hook).apply(observer, args);
          if (isThenable(returned)) {
            later ??= [];
            later.push(returned);
          }
        } catch (error) {
          failure ??= { error };
        }
      }
      if (later !== undefined) return settleAll(later, failure);
      if (failure !== undefined) throw failure.error;
      return undefined;
    };
  }
  return combined as unknown as O;
}

/** Resolves when every async listener has; rejects with the first failure, sync or async. */
async function settleAll(later: readonly PromiseLike<unknown>[], failure: { error: unknown } | undefined) {
  const settled = await Promise.allSettled(later);
  if (failure !== undefined) throw failure.error;
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
}

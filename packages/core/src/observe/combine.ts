import type { Observer } from '../types.js';

type Hook = (...args: never[]) => void;

/**
 * One Observer that calls several (metrics and logs, say) in order. Every hook any of them has is passed on,
 * including hooks beyond Observer's (an adapter's `onAdapterError`). A throwing observer does not keep the
 * others from hearing the event.
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
      for (const observer of listeners) {
        try {
          ((observer as Record<string, unknown>)[name] as Hook).apply(observer, args);
        } catch {
          // An observer bug must neither reach the request path nor silence the other observers.
        }
      }
    };
  }
  return combined as unknown as O;
}

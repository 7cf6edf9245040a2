import type { Observer } from '../types.js';

const HOOKS = [
  'onDecision',
  'onStoreError',
  'onStoreLatency',
  'onRulesLoaded',
  'onRulesError',
  'onLeases',
] as const satisfies readonly (keyof Observer)[];

/**
 * One Observer that calls several (metrics and logs, say) in order. A throwing observer does not keep the
 * others from hearing the event.
 */
export function combineObservers(...observers: readonly (Observer | undefined)[]): Observer {
  const present = observers.filter((observer): observer is Observer => observer !== undefined);
  const combined: Record<string, (...args: never[]) => void> = {};
  for (const hook of HOOKS) {
    const listeners = present.filter((observer) => typeof observer[hook] === 'function');
    if (listeners.length === 0) continue;
    combined[hook] = (...args: never[]) => {
      for (const observer of listeners) {
        try {
          (observer[hook] as (...a: never[]) => void).apply(observer, args);
        } catch {
          // An observer bug must neither reach the request path nor silence the other observers.
        }
      }
    };
  }
  return combined as Observer;
}

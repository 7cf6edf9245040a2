import type { CompiledRules, Decision, Descriptors, Observer, StoreErrorKind } from '../types.js';

/** An Observer whose every hook exists and never throws: the engine calls it without checks. */
export interface GuardedObserver {
  onDecision(decision: Decision, descriptors: Descriptors): void;
  onStoreError(kind: StoreErrorKind, error: Error): void;
  onStoreLatency(seconds: number): void;
  onRulesLoaded(rules: CompiledRules): void;
  onRulesError(error: Error): void;
  onLeases(rule: string, delta: number): void;
  /** Whether the observer listens to store latency (timing a call costs a clock read on each side). */
  readonly timesStore: boolean;
}

const nothing = (): void => {};

/**
 * Wraps an observer once, at start-up: hooks it lacks become no-ops and a throwing hook is swallowed,
 * because an observer bug must not reach the request path. Built once so a request pays no lookups.
 */
export function guardObserver(observer: Observer = {}): GuardedObserver {
  const guard = <A extends unknown[]>(hook: ((...args: A) => void) | undefined): ((...args: A) => void) => {
    if (typeof hook !== 'function') return nothing;
    return (...args: A) => {
      try {
        hook.apply(observer, args);
      } catch {
        // An observer bug must not reach the request path.
      }
    };
  };
  const onDecision = observer.onDecision;
  return {
    // Called on every request: two named parameters, no rest array.
    onDecision:
      typeof onDecision === 'function'
        ? (decision, descriptors) => {
            try {
              onDecision.call(observer, decision, descriptors);
            } catch {
              // As above.
            }
          }
        : nothing,
    onStoreError: guard(observer.onStoreError),
    onStoreLatency: guard(observer.onStoreLatency),
    onRulesLoaded: guard(observer.onRulesLoaded),
    onRulesError: guard(observer.onRulesError),
    onLeases: guard(observer.onLeases),
    timesStore: typeof observer.onStoreLatency === 'function',
  };
}

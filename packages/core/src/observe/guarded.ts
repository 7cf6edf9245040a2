import { isThenable } from '../base/maybe.js';
import type { PriorityClass } from '../rules/adaptiveTypes.js';
import type { CompiledRules, Descriptors } from '../rules/contract.js';
import type { StoreErrorKind } from '../store/contract.js';
import type { Decision, Observer, RegionEvent } from './contract.js';

/** An Observer whose every hook exists and never throws nor rejects: the engine calls it without checks. */
export interface GuardedObserver {
  onDecision(decision: Decision, descriptors: Descriptors): void;
  onStoreError(kind: StoreErrorKind, error: Error): void;
  onStoreLatency(seconds: number): void;
  onRulesLoaded(rules: CompiledRules): void;
  onRulesError(error: Error): void;
  onLeases(rule: string, delta: number): void;
  onHeld(rule: string, delta: number): void;
  onAdaptiveFactor(rule: string, factor: number): void;
  onShed(rule: string, priority: PriorityClass): void;
  onBan(rule: string, until: number): void;
  onUnban(rule: string, lifted: boolean, tag: string): void;
  onRegion(event: RegionEvent): void;
  /** Whether the observer listens to store latency (timing a call costs a clock read on each side). */
  readonly timesStore: boolean;
  /** Hook calls that threw or whose promise rejected, since start. */
  readonly failures: number;
}

const nothing = (): void => {};

/**
 * Wraps an observer once, at start-up: hooks it lacks become no-ops, and a hook that throws or (async) rejects
 * is swallowed and counted, because an observer bug must neither reach the request path nor crash the process
 * with an unhandled rejection. Built once so a request pays no lookups.
 */
export function guardObserver(observer: Observer = {}): GuardedObserver {
  let failures = 0;
  const failed = (): void => {
    failures++;
  };
  /** What a hook returned: a later rejection is counted and handled, never left unhandled. */
  const settle = (returned: unknown): void => {
    if (returned !== undefined && isThenable(returned)) returned.then(undefined, failed);
  };
  const guard = <A extends unknown[]>(
    hook: ((...args: A) => unknown) | undefined,
  ): ((...args: A) => void) => {
    if (typeof hook !== 'function') return nothing;
    return (...args: A) => {
      try {
        settle(hook.apply(observer, args));
      } catch {
        failed();
      }
    };
  };
  const onDecision = observer.onDecision as ((d: Decision, s: Descriptors) => unknown) | undefined;
  return {
    // Called on every request: two named parameters, no rest array.
    onDecision:
      typeof onDecision === 'function'
        ? (decision, descriptors) => {
            try {
              settle(onDecision.call(observer, decision, descriptors));
            } catch {
              failed();
            }
          }
        : nothing,
    onStoreError: guard(observer.onStoreError),
    onStoreLatency: guard(observer.onStoreLatency),
    onRulesLoaded: guard(observer.onRulesLoaded),
    onRulesError: guard(observer.onRulesError),
    onLeases: guard(observer.onLeases),
    onHeld: guard(observer.onHeld),
    onAdaptiveFactor: guard(observer.onAdaptiveFactor),
    onShed: guard(observer.onShed),
    onBan: guard(observer.onBan),
    onUnban: guard(observer.onUnban),
    onRegion: guard(observer.onRegion),
    timesStore: typeof observer.onStoreLatency === 'function',
    get failures() {
      return failures;
    },
  };
}

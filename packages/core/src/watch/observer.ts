import type { GuardedObserver } from '../observe/guarded.js';
import type { CompiledRules } from '../rules/contract.js';
import type { StoreErrorKind } from '../store/contract.js';
import type { HotKeys } from './hotKeys.js';

/**
 * The limiter's observer with the watch listening in: store times and failures, and rule tables, go to both.
 * Decisions do not pass here (the engine hands them to the watch with their checks), so `onDecision` is the
 * observer's own function, as fast as without a watch. Store calls are timed from now on (a remote call's
 * two clock reads; a store answering in process is never timed).
 */
export function watchedObserver(observer: GuardedObserver, watch: HotKeys): GuardedObserver {
  const onStoreLatency = observer.onStoreLatency;
  const onStoreError = observer.onStoreError;
  const onRulesLoaded = observer.onRulesLoaded;
  return {
    ...observer,
    onStoreLatency(seconds: number) {
      watch.storeLatency(seconds);
      onStoreLatency(seconds);
    },
    onStoreError(kind: StoreErrorKind, error: Error) {
      watch.storeError();
      onStoreError(kind, error);
    },
    onRulesLoaded(rules: CompiledRules) {
      watch.rulesLoaded(rules);
      onRulesLoaded(rules);
    },
    timesStore: true,
    get failures() {
      return observer.failures;
    },
  };
}

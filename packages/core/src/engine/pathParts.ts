import type { AdaptiveControl } from '../adaptive/controller.js';
import type { Lists } from '../lists/contract.js';
import type { GuardedObserver } from '../observe/guarded.js';
import type { RegionalBudgets } from '../regions/index.js';
import type { CompiledRules } from '../rules/contract.js';
import type { Store } from '../store/contract.js';
import type { TagCache } from '../store/tags.js';
import type { HotKeys } from '../watch/hotKeys.js';
import type { LocalLeases } from './localLeases.js';
import type { StoreCaller } from './storeCall.js';

/**
 * What a limiter's per-request functions read, built once by `createLimiter`; only `table` changes (a rules
 * reload swaps it whole). A plain object, so each step of requestPath.ts and plainLane.ts is a function of it
 * that a test can call alone.
 */
export interface RequestPath {
  table: CompiledRules;
  readonly lists: Lists | undefined;
  readonly dryRun: boolean;
  readonly tags: TagCache;
  readonly pools: LocalLeases;
  /** The limiter's store and the local one, each as the engine calls it (time-limited when remote). */
  readonly calls: { readonly store: StoreCaller; readonly local: StoreCaller };
  /** The same stores, for releases. */
  readonly stores: { readonly store: Store; readonly local: Store };
  readonly observer: GuardedObserver;
  readonly clock: () => number;
  /** Adaptive limits and priority shedding; reached only by tables with such rules. */
  readonly adaptive?: AdaptiveControl;
  /** The global budgets of `scope: global` rules; absent without the `regions` option. */
  readonly regions?: RegionalBudgets;
  /** The heavy hitters and counts per rule (watch/), fed with each decision's checks; absent with `watch: false`. */
  readonly watch?: HotKeys;
}

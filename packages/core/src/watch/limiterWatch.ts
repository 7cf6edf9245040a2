import { ConfigError } from '../base/errors.js';
import type { GuardedObserver } from '../observe/guarded.js';
import type { LimiterHealth } from '../observe/health.js';
import type { Store } from '../store/contract.js';
import type { GatewayBoard } from './board.js';
import { HotKeys } from './hotKeys.js';
import { watchedObserver } from './observer.js';
import { type WatchOptions, watchSettings } from './options.js';
import { BoardPublisher } from './publisher.js';

/** A limiter's watch, as `createLimiter` wires it. */
export interface LimiterWatch {
  readonly hotKeys: HotKeys;
  /** The limiter's observer with the watch listening in (store times, failures, rule tables). */
  readonly observer: GuardedObserver;
  /** This gateway's board now (`limiter.hotKeys()`). */
  view(): GatewayBoard;
  /** Stops publishing (the limiter closes). */
  stop(): void;
}

/** What the watch reads of its limiter. */
export interface WatchedLimiter {
  readonly store: Store;
  readonly observer: GuardedObserver;
  readonly clock: () => number;
  readonly health: () => LimiterHealth;
}

/**
 * The `watch` option made real: the sketches, the observer that feeds them what decisions do not carry, and,
 * with `publish`, the publisher (started here). Undefined for `watch: false`.
 */
export function limiterWatch(
  option: WatchOptions | false | undefined,
  limiter: WatchedLimiter,
): LimiterWatch | undefined {
  const settings = watchSettings(option);
  if (settings === undefined) return undefined;
  const { store, clock, health } = limiter;
  const hotKeys = new HotKeys(settings, clock());
  let publisher: BoardPublisher | undefined;
  if (settings.publish) {
    if (store.board === undefined)
      throw new ConfigError(
        'watch.publish needs a store with a board (MemoryStore, RedisStore); this store has none',
      );
    publisher = new BoardPublisher({ board: store.board, watch: hotKeys, settings, clock, health });
    publisher.start();
  }
  return {
    hotKeys,
    observer: watchedObserver(limiter.observer, hotKeys),
    view: () => hotKeys.view(clock(), health()),
    stop: () => publisher?.stop(),
  };
}

import type { Store, StoreHealth } from '../store/contract.js';

/** The limiter's state for readiness probes and alerts, read without a round trip. */
export interface LimiterHealth {
  /** True while checks are decided by the store: connected, breaker not open, not failing open. */
  readonly healthy: boolean;
  /** False while the store cannot be reached (its own report, else: its last call failed). */
  readonly connected: boolean;
  /** The store's breaker; `closed` for a store that has none. */
  readonly breaker: StoreHealth['breaker'];
  /** Store calls sent and not yet settled. */
  readonly pending: number;
  /** Epoch ms since which checks have been failing open (or answered by a fallback); undefined when healthy. */
  readonly failingOpenSince?: number;
  /** Observer hook calls that threw or rejected since start (swallowed, never thrown into a request). */
  readonly observerFailures: number;
  /** The store's own report (keys, evictions, ...); undefined for a store without `health()`. */
  readonly store: StoreHealth | undefined;
  /** The local (`scope: local`) store's own report, when it gives one. */
  readonly local: StoreHealth | undefined;
}

/** What the engine itself saw of its store calls, for stores that report nothing. */
export interface EngineView {
  readonly pending: number;
  readonly failingSince: number | undefined;
  readonly observerFailures: number;
}

/** A store's health report; a store whose `health()` throws is reported as unreachable. */
export function storeHealth(store: Store): StoreHealth | undefined {
  if (typeof store.health !== 'function') return undefined;
  try {
    return store.health();
  } catch {
    return { connected: false, breaker: 'closed', pending: 0 };
  }
}

/** Joins the store's report (which knows more, when it has one) with what the engine saw. */
export function limiterHealth(remote: Store, local: Store, seen: EngineView): LimiterHealth {
  const store = storeHealth(remote);
  const failingOpenSince = store?.failingOpenSince ?? seen.failingSince;
  const connected = store?.connected ?? seen.failingSince === undefined;
  const breaker = store?.breaker ?? 'closed';
  return {
    healthy: connected && breaker !== 'open' && failingOpenSince === undefined,
    connected,
    breaker,
    pending: store?.pending ?? seen.pending,
    ...(failingOpenSince === undefined ? {} : { failingOpenSince }),
    observerFailures: seen.observerFailures,
    store,
    local: storeHealth(local),
  };
}

import { storeErrorKind } from '../base/errors.js';
import type { Decision, Observer } from '../observe/contract.js';
import type { Lease, Store } from '../store/contract.js';

/** A heartbeat this many times per lease lifetime: two rounds may fail before a lease can expire. */
export const RENEWALS_PER_LEASE = 3;
/** No faster than this, whatever a rule's lease: a renewal round costs a store call. */
export const MIN_RENEW_INTERVAL_MS = 100;

/** Sends one round of renewals: every held lease, in one call per store (see requestPath.ts renewLeases). */
export type RenewRound = (leases: readonly Lease[]) => Promise<void>;

/**
 * The leases of the responses and sockets still open (a stream, a WebSocket), kept alive by ONE unref'd timer
 * per limiter: every `leaseMs / RENEWALS_PER_LEASE` (the shortest held), one renewal round for all of them,
 * not one call per connection. `hold` starts keeping a decision's concurrency leases, `drop` (its release or
 * cancel) stops; with nothing held there is no timer. The process dying stops the heartbeat, so its leases
 * expire `leaseMs` later, as before.
 */
export class LeaseKeeper {
  readonly #held = new Map<Decision, readonly Lease[]>();
  readonly #round: RenewRound;
  readonly #onHeld: (rule: string, delta: number) => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #intervalMs = Number.POSITIVE_INFINITY;
  /** A round still out: the next tick skips rather than pile calls on a slow store. */
  #pending = false;
  #rounds = 0;

  /** `onHeld`: told +1 per lease a decision starts holding, -1 when it is dropped (the live connections gauge). */
  constructor(round: RenewRound, onHeld: (rule: string, delta: number) => void = () => {}) {
    this.#round = round;
    this.#onHeld = onHeld;
  }

  /** Decisions whose leases are being renewed. */
  get size(): number {
    return this.#held.size;
  }

  /** Renewal rounds sent so far. */
  get rounds(): number {
    return this.#rounds;
  }

  /** Keeps the decision's concurrency leases renewed until `drop(decision)`; a decision holding none is ignored. */
  hold(decision: Decision): void {
    const leases = decision.leases.filter((l) => l.refund === undefined && l.leaseMs !== undefined);
    if (leases.length === 0 || this.#held.has(decision)) return;
    this.#held.set(decision, leases);
    for (const lease of leases) this.#onHeld(lease.rule, 1);
    let shortest = Number.POSITIVE_INFINITY;
    for (const lease of leases) shortest = Math.min(shortest, lease.leaseMs!);
    const interval = Math.max(MIN_RENEW_INTERVAL_MS, Math.floor(shortest / RENEWALS_PER_LEASE));
    if (interval < this.#intervalMs) this.#start(interval);
  }

  /** Stops renewing the decision's leases (they are being released); the timer stops with the last one. */
  drop(decision: Decision): void {
    const leases = this.#held.get(decision);
    if (leases === undefined) return;
    this.#held.delete(decision);
    for (const lease of leases) this.#onHeld(lease.rule, -1);
    if (this.#held.size === 0) this.stop();
  }

  /** Sends one round now: every held lease in one call (per store). Never rejects. */
  async renewNow(): Promise<void> {
    if (this.#held.size === 0 || this.#pending) return;
    const leases: Lease[] = [];
    for (const held of this.#held.values()) for (const lease of held) leases.push(lease);
    this.#pending = true;
    this.#rounds++;
    try {
      await this.#round(leases);
    } finally {
      this.#pending = false;
    }
  }

  /** Stops the heartbeat (the limiter closes); what is held expires in the store by itself. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#intervalMs = Number.POSITIVE_INFINITY;
  }

  #start(intervalMs: number): void {
    this.stop();
    this.#intervalMs = intervalMs;
    this.#timer = setInterval(() => void this.renewNow(), intervalMs);
    // The heartbeat must never keep a process alive that has nothing else to do.
    this.#timer.unref?.();
  }
}

/** The stores a round goes to and where a failed round is reported. */
export interface RenewTargets {
  readonly stores: { readonly store: Store; readonly local: Store };
  readonly observer: Pick<Observer, 'onStoreError'>;
  readonly clock: () => number;
}

/**
 * A round: the held leases of each scope in ONE `renew` call to the store holding them. A failed call is
 * reported to the observer as a store error (the leases then live on until `leaseMs` after their last renewal,
 * and the next round tries again); never rejects.
 */
export function renewRound(targets: RenewTargets): RenewRound {
  return async (leases) => {
    const now = targets.clock();
    const remote = leases.filter((l) => l.scope === 'store');
    const local = leases.filter((l) => l.scope === 'local');
    const sent = [
      remote.length === 0 ? undefined : targets.stores.store.renew?.(remote, now),
      local.length === 0 ? undefined : targets.stores.local.renew?.(local, now),
    ];
    for (const result of await Promise.allSettled(sent)) {
      if (result.status === 'fulfilled') continue;
      const error = result.reason instanceof Error ? result.reason : new Error(String(result.reason));
      targets.observer.onStoreError?.(storeErrorKind(error), error);
    }
  };
}

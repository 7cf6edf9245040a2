import { StoreError, storeErrorKind } from '../base/errors.js';
import type { NoticeLogger } from '../base/notices.js';
import type { Decision, Observer } from '../observe/contract.js';
import type { Lease, Store } from '../store/contract.js';

/** A heartbeat this many times per lease lifetime: two rounds may fail before a lease can expire. */
export const RENEWALS_PER_LEASE = 3;
/** No faster than this, whatever a rule's lease: a renewal round costs a store call. */
export const MIN_RENEW_INTERVAL_MS = 100;

/** The keeper's notices, once per episode (codes listed in base/notices.ts). */
export const LEASE_NOTICES = {
  SLUICE_LEASES_UNRENEWED:
    'leases of open connections (streams, sockets) may have expired while they are open, so more may be ' +
    'admitted than the limit until renewals work again',
  SLUICE_LEASES_RENEWED: 'leases of open connections renewed in time again',
} as const;

/** What a round of renewals came to: every store took it, and how many leases the stores no longer held. */
export interface RoundOutcome {
  readonly renewed: boolean;
  readonly missing: number;
}

/**
 * Sends one round of renewals: every held lease, in one call per store (see requestPath.ts renewLeases).
 * Never rejects.
 */
export type RenewRound = (leases: readonly Lease[]) => Promise<RoundOutcome>;

/** What a keeper tells, besides the rounds it sends. */
export interface KeeperOptions {
  /** Told +1 per lease a decision starts holding, -1 when it is dropped (the live connections gauge). */
  readonly onHeld?: (rule: string, delta: number) => void;
  /** A round that came after a lease's end: reported as a store time-out (it may have lapsed). */
  readonly observer?: Pick<Observer, 'onStoreError'>;
  /** Where the episode's two lines go (failed or late, then in time again). */
  readonly logger?: NoticeLogger;
  /** Monotonic ms: lateness is measured on it, so a wall clock step is no lateness. */
  readonly monotonic?: () => number;
}

/** A decision's leases being kept: the shortest lease, and since when (monotonic ms) the keeper holds them. */
interface Held {
  readonly leases: readonly Lease[];
  readonly shortestMs: number;
  readonly since: number;
}

/**
 * The leases of the responses and sockets still open (a stream, a WebSocket), kept alive by ONE unref'd timer
 * per limiter: every `leaseMs / RENEWALS_PER_LEASE` (the shortest held), one renewal round for all of them,
 * not one call per connection. `hold` starts keeping a decision's concurrency leases, `drop` (its release or
 * cancel) stops; with nothing held there is no timer. The process dying stops the heartbeat, so its leases
 * expire `leaseMs` later, as before. A lease that may have lapsed is never silent: a failed round, or one sent
 * after a held lease's end (a stalled event loop, a slow store), or one that finds leases gone from the store
 * (expired, evicted, lost with a restarted store's data), opens an episode logged once (SLUICE_LEASES_UNRENEWED)
 * until a round succeeds in time with every lease found (SLUICE_LEASES_RENEWED).
 */
export class LeaseKeeper {
  readonly #held = new Map<Decision, Held>();
  readonly #round: RenewRound;
  readonly #onHeld: (rule: string, delta: number) => void;
  readonly #observer: Pick<Observer, 'onStoreError'> | undefined;
  readonly #notices: RenewalNotices;
  readonly #monotonic: () => number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #intervalMs = Number.POSITIVE_INFINITY;
  /** A round still out: the next tick skips rather than pile calls on a slow store. */
  #pending = false;
  #rounds = 0;
  /** When (monotonic ms) the last round that every store took was sent. */
  #renewedAt = Number.NEGATIVE_INFINITY;

  constructor(round: RenewRound, options: KeeperOptions = {}) {
    this.#round = round;
    this.#onHeld = options.onHeld ?? (() => {});
    this.#observer = options.observer;
    this.#notices = new RenewalNotices(options.logger);
    this.#monotonic = options.monotonic ?? (() => performance.now());
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
    let shortestMs = Number.POSITIVE_INFINITY;
    for (const lease of leases) shortestMs = Math.min(shortestMs, lease.leaseMs!);
    this.#held.set(decision, { leases, shortestMs, since: this.#monotonic() });
    for (const lease of leases) this.#onHeld(lease.rule, 1);
    const interval = Math.max(MIN_RENEW_INTERVAL_MS, Math.floor(shortestMs / RENEWALS_PER_LEASE));
    if (interval < this.#intervalMs) this.#start(interval);
  }

  /** Stops renewing the decision's leases (they are being released); the timer stops with the last one. */
  drop(decision: Decision): void {
    const held = this.#held.get(decision);
    if (held === undefined) return;
    this.#held.delete(decision);
    for (const lease of held.leases) this.#onHeld(lease.rule, -1);
    if (this.#held.size === 0) this.stop();
  }

  /** Sends one round now: every held lease in one call (per store). Never rejects. */
  async renewNow(): Promise<void> {
    if (this.#held.size === 0 || this.#pending) return;
    const started = this.#monotonic();
    const leases: Lease[] = [];
    // How far past the end of the lease held longest without a renewal this round is sent (<= 0: in time).
    let lateMs = Number.NEGATIVE_INFINITY;
    for (const held of this.#held.values()) {
      for (const lease of held.leases) leases.push(lease);
      lateMs = Math.max(lateMs, started - Math.max(held.since, this.#renewedAt) - held.shortestMs);
    }
    this.#pending = true;
    this.#rounds++;
    try {
      if (lateMs > 0) this.#late(Math.ceil(lateMs), started);
      const { renewed, missing } = await this.#round(leases);
      if (missing > 0) this.#lost(missing, started);
      if (!renewed) this.#notices.failed(started, 'a lease renewal round failed');
      else {
        this.#renewedAt = started;
        if (lateMs <= 0 && missing === 0) this.#notices.renewed(started);
      }
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

  /** A round sent after a held lease's end: that lease may have lapsed, and its connection stopped counting. */
  #late(lateMs: number, now: number): void {
    const why = `a lease renewal round was sent ${lateMs} ms after a held lease's end`;
    this.#observer?.onStoreError?.('timeout', new StoreError('ERR_SLUICE_STORE_TIMEOUT', why));
    this.#notices.failed(now, why);
  }

  /** Leases the store no longer held: their connections stopped counting while they stay open. */
  #lost(missing: number, now: number): void {
    const why = `${missing} held lease(s) were gone from the store when renewed (expired, evicted, or lost with its data)`;
    this.#observer?.onStoreError?.('error', new StoreError('ERR_SLUICE_LEASE_LOST', why));
    this.#notices.failed(now, why);
  }

  #start(intervalMs: number): void {
    this.stop();
    this.#intervalMs = intervalMs;
    this.#timer = setInterval(() => void this.renewNow(), intervalMs);
    // The heartbeat must never keep a process alive that has nothing else to do.
    this.#timer.unref?.();
  }
}

/** An episode of renewals failed or late, told once when it starts and once when renewals are in time again. */
class RenewalNotices {
  readonly #logger: NoticeLogger | undefined;
  /** Monotonic ms the episode began; undefined outside one. */
  #since: number | undefined;

  constructor(logger: NoticeLogger | undefined) {
    this.#logger = logger;
  }

  failed(now: number, why: string): void {
    if (this.#since !== undefined) return;
    this.#since = now;
    this.#warn(`sluice: ${why}: ${LEASE_NOTICES.SLUICE_LEASES_UNRENEWED} [SLUICE_LEASES_UNRENEWED]`);
  }

  renewed(now: number): void {
    if (this.#since === undefined) return;
    const after = Math.round(now - this.#since);
    this.#since = undefined;
    this.#warn(`sluice: ${LEASE_NOTICES.SLUICE_LEASES_RENEWED} after ${after} ms [SLUICE_LEASES_RENEWED]`);
  }

  #warn(line: string): void {
    try {
      this.#logger?.warn(line);
    } catch {
      // A logger that throws must not stop the heartbeat.
    }
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
 * and the next round tries again) and the round is not `renewed` (the keeper logs the episode); `missing` adds
 * up the leases the stores said they no longer held. Never rejects.
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
    let renewed = true;
    let missing = 0;
    for (const result of await Promise.allSettled(sent)) {
      if (result.status === 'fulfilled') {
        missing += typeof result.value === 'number' ? result.value : 0;
        continue;
      }
      renewed = false;
      const error = result.reason instanceof Error ? result.reason : new Error(String(result.reason));
      targets.observer.onStoreError?.(storeErrorKind(error), error);
    }
    return { renewed, missing };
  };
}

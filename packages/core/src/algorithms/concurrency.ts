import { type AlgorithmDescriptor, hasRecords } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';
import { storedCount } from './stored.js';

/** concurrency params: `limit` leases at once, each held at most `windowMs`, and the id of this request's lease. */
export interface ConcurrencyParams extends LimitParams {
  readonly leaseId: string;
}

/** One held lease: `cost` units until it is released or `expiresAt` (epoch ms) passes. */
export interface ConcurrencyLease {
  readonly id: string;
  readonly expiresAt: number;
  readonly cost: number;
}

/** concurrency state: the leases taken, sorted by expiry; expired ones are ignored and pruned. */
export interface ConcurrencyState {
  readonly leases: readonly ConcurrencyLease[];
}

function byExpiry(a: ConcurrencyLease, b: ConcurrencyLease): number {
  return a.expiresAt - b.expiresAt;
}

/**
 * Leases still held at `now`, earliest expiry first, except `exceptId` (a request renewing its own lease).
 * A lease expires at most `windowMs` after `now`, or up to twice that after a clock step back; one expiring
 * later still is stale or corrupt and is dropped.
 */
function held(
  state: ConcurrencyState | undefined,
  now: number,
  windowMs: number,
  exceptId?: string,
): ConcurrencyLease[] {
  if (state === undefined) return [];
  return state.leases
    .filter(
      (lease) => lease.expiresAt > now && lease.expiresAt - now <= 2 * windowMs && lease.id !== exceptId,
    )
    .sort(byExpiry);
}

function used(leases: readonly ConcurrencyLease[]): number {
  let sum = 0;
  for (const lease of leases) sum += storedCount(lease.cost);
  return sum;
}

/** Time until every lease has expired (whole ms); `horizon` caps each expiry (now + windowMs for answers). */
function msUntilAllExpire(leases: readonly ConcurrencyLease[], now: number, horizon: number): number {
  let last = now;
  for (const lease of leases) last = Math.max(last, Math.min(Math.ceil(lease.expiresAt), horizon));
  return last - now;
}

/** The wait until expiring leases (earliest first) free `excess` units, each held at most windowMs more. */
function waitToFree(
  leases: readonly ConcurrencyLease[],
  excess: number,
  now: number,
  windowMs: number,
): number {
  let freed = 0;
  for (const lease of leases) {
    freed += storedCount(lease.cost);
    if (freed >= excess) return Math.min(Math.ceil(lease.expiresAt) - now, windowMs);
  }
  return 0;
}

/**
 * concurrency: at most `limit` units leased at once. An allowed request holds a lease `leaseId` of `cost`
 * units for windowMs or until released; taking an id already held renews it. retryAfterMs of a denied
 * request is the time until enough leases expire, assuming none is released early: exact if no lease is
 * released, an upper bound otherwise (a release only makes room sooner). After a clock step back, a lease
 * counts until it expires, but no wait is given longer than windowMs.
 */
export const concurrency: AlgorithmDescriptor<'concurrency', ConcurrencyState, ConcurrencyParams> = {
  name: 'concurrency',
  limit: 'concurrent',
  burst: false,
  calendar: false,
  // Leases are held, not spent: a batch taken ahead would hold slots no request uses.
  leasable: false,
  release: 'lease',
  withLease: (params, leaseId) => ({ ...params, leaseId }),
  releaseLease,
  isState: (value): value is ConcurrencyState => hasRecords(value, 'leases'),
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const window = params.windowMs;
    const others = held(state, t, window, params.leaseId);
    const inUse = used(others);
    if (cost > params.limit || inUse + cost > params.limit) {
      const outcome: Outcome<ConcurrencyState> = {
        allowed: false,
        state: state ?? { leases: [] },
        limit: params.limit,
        remaining: Math.max(0, params.limit - inUse),
        resetMs: msUntilAllExpire(others, t, t + window),
        retryAfterMs:
          cost > params.limit
            ? Number.POSITIVE_INFINITY
            : waitToFree(others, inUse + cost - params.limit, t, window),
        ttlMs: msUntilAllExpire(others, t, Number.POSITIVE_INFINITY),
      };
      return outcome;
    }
    const leases = [...others, { id: params.leaseId, expiresAt: t + window, cost }].sort(byExpiry);
    return {
      allowed: true,
      state: { leases },
      limit: params.limit,
      remaining: Math.max(0, params.limit - inUse - cost),
      resetMs: msUntilAllExpire(leases, t, t + window),
      retryAfterMs: 0,
      ttlMs: msUntilAllExpire(leases, t, Number.POSITIVE_INFINITY),
    };
  },
};

/**
 * Returns the state without lease `id` and without expired leases. Idempotent: releasing an unknown or
 * already released id changes nothing else.
 */
export function releaseLease(state: ConcurrencyState | undefined, id: string, now: number): ConcurrencyState {
  if (state === undefined) return { leases: [] };
  const t = Math.floor(now);
  // No rule params here: keep every lease not yet expired, however far ahead (the next decision drops those).
  return { leases: state.leases.filter((lease) => lease.expiresAt > t && lease.id !== id).sort(byExpiry) };
}

/**
 * The state with lease `id` extended to `now + windowMs` (never shortened), and the key's TTL: undefined when
 * the lease is no longer held (released or expired), which a renewal must not bring back.
 */
export function renewLease(
  state: ConcurrencyState | undefined,
  id: string,
  now: number,
  windowMs: number,
): { state: ConcurrencyState; ttlMs: number } | undefined {
  if (state === undefined) return undefined;
  const t = Math.floor(now);
  const live = state.leases.filter((lease) => lease.expiresAt > t);
  const own = live.find((lease) => lease.id === id);
  if (own === undefined) return undefined;
  const expiresAt = Math.max(own.expiresAt, t + windowMs);
  const leases = live.map((lease) => (lease === own ? { ...own, expiresAt } : lease)).sort(byExpiry);
  return { state: { leases }, ttlMs: msUntilAllExpire(leases, t, Number.POSITIVE_INFINITY) };
}

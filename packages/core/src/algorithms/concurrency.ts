import type { Algorithm, LimitParams, Outcome } from '../types.js';

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

/** Leases still held at `now`, earliest expiry first, except `exceptId` (a request renewing its own lease). */
function held(state: ConcurrencyState | undefined, now: number, exceptId?: string): ConcurrencyLease[] {
  if (state === undefined) return [];
  return state.leases.filter((lease) => lease.expiresAt > now && lease.id !== exceptId).sort(byExpiry);
}

function used(leases: readonly ConcurrencyLease[]): number {
  let sum = 0;
  for (const lease of leases) sum += lease.cost;
  return sum;
}

/** Time until every lease has expired. */
function msUntilAllExpire(leases: readonly ConcurrencyLease[], now: number): number {
  let last = now;
  for (const lease of leases) last = Math.max(last, lease.expiresAt);
  return last - now;
}

/** The wait until expiring leases (earliest first) free `excess` units. */
function waitToFree(leases: readonly ConcurrencyLease[], excess: number, now: number): number {
  let freed = 0;
  for (const lease of leases) {
    freed += lease.cost;
    if (freed >= excess) return lease.expiresAt - now;
  }
  return 0;
}

/**
 * concurrency: at most `limit` units leased at once. An allowed request holds a lease `leaseId` of `cost`
 * units for windowMs or until released; taking an id already held renews it. retryAfterMs of a denied
 * request is the time until enough leases expire, assuming none is released early: exact if no lease is
 * released, an upper bound otherwise (a release only makes room sooner).
 */
export const concurrency: Algorithm<ConcurrencyState, ConcurrencyParams> = {
  name: 'concurrency',
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const others = held(state, t, params.leaseId);
    const inUse = used(others);
    if (cost > params.limit || inUse + cost > params.limit) {
      const resetMs = msUntilAllExpire(others, t);
      const outcome: Outcome<ConcurrencyState> = {
        allowed: false,
        state: state ?? { leases: [] },
        limit: params.limit,
        remaining: Math.max(0, params.limit - inUse),
        resetMs,
        retryAfterMs:
          cost > params.limit ? Number.POSITIVE_INFINITY : waitToFree(others, inUse + cost - params.limit, t),
        ttlMs: resetMs,
      };
      return outcome;
    }
    const leases = [...others, { id: params.leaseId, expiresAt: t + params.windowMs, cost }].sort(byExpiry);
    const resetMs = msUntilAllExpire(leases, t);
    return {
      allowed: true,
      state: { leases },
      limit: params.limit,
      remaining: Math.max(0, params.limit - inUse - cost),
      resetMs,
      retryAfterMs: 0,
      ttlMs: resetMs,
    };
  },
};

/**
 * Returns the state without lease `id` and without expired leases. Idempotent: releasing an unknown or
 * already released id changes nothing else.
 */
export function releaseLease(state: ConcurrencyState | undefined, id: string, now: number): ConcurrencyState {
  return { leases: held(state, Math.floor(now), id) };
}

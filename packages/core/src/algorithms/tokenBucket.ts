import { type Charge, undrained } from './charge.js';
import { type AlgorithmDescriptor, hasNumbers } from './descriptor.js';
import type { LimitParams, Outcome } from './limits.js';

/**
 * token_bucket state. Tokens are counted in units of 1/windowMs of a token, so that refilling `limit`
 * tokens per windowMs adds exactly `limit` units per millisecond: all arithmetic stays in integers.
 */
export interface TokenBucketState {
  /** Tokens x windowMs. */
  readonly tokens: number;
  /** Epoch ms at which `tokens` was counted. */
  readonly at: number;
}

/** Capacity in units; a rule with no refill (limit 0) has none. */
function capacityUnits(p: LimitParams): number {
  return p.limit > 0 ? p.burst * p.windowMs : 0;
}

/**
 * Units in the bucket at `now`: the stored ones plus `limit` per elapsed ms, up to the capacity. Before
 * `at` (a clock that stepped back) the refill runs backwards, down to an empty bucket, as gcra reads its
 * TAT; a state so far ahead that it would be more than empty again is stale or corrupt and reads as full.
 */
function unitsAt(state: TokenBucketState | undefined, now: number, p: LimitParams): number {
  const capacity = capacityUnits(p);
  if (state === undefined) return capacity;
  const elapsed = now - state.at;
  if (Number.isNaN(state.tokens)) return capacity;
  const tokens = Math.min(capacity, Math.max(0, state.tokens));
  if (elapsed >= 0) {
    const missing = capacity - tokens;
    // Compare times, not elapsed * limit, so that a long-idle key cannot overflow 2^53.
    if (missing <= 0 || elapsed >= Math.ceil(missing / p.limit)) return capacity;
    return Math.min(capacity, tokens + elapsed * p.limit); // a time that is not a whole ms could overshoot
  }
  const units = tokens + elapsed * p.limit;
  if (units >= 0) return units;
  return units >= -capacity ? 0 : capacity; // NaN (a corrupt state) lands here too
}

/** Whole ms to refill `units` (0 for a rule with no refill, whose capacity is 0). */
function msToRefill(units: number, p: LimitParams): number {
  return p.limit > 0 ? Math.ceil(units / p.limit) : 0;
}

/** Puts back the tokens of a charge not yet refilled (see `undrained`), never beyond a full bucket. */
function refundTokens(
  state: TokenBucketState,
  now: number,
  params: LimitParams,
  charge: Charge,
): { state: TokenBucketState; ttlMs: number } | undefined {
  const t = Math.floor(now);
  const capacity = capacityUnits(params);
  const units = unitsAt(state, t, params);
  const given = Math.min(capacity - units, undrained(charge, t, params));
  if (!(given > 0)) return undefined;
  const left = units + given;
  return { state: { tokens: left, at: t }, ttlMs: msToRefill(capacity - left, params) };
}

/**
 * token_bucket: a bucket of `burst` tokens refilled at `limit` per windowMs; a request takes `cost` tokens
 * when they are there. Gives the same decisions as gcra (proved by a property test).
 */
export const tokenBucket: AlgorithmDescriptor<'token_bucket', TokenBucketState> = {
  name: 'token_bucket',
  limit: 'requests',
  burst: true,
  calendar: false,
  leasable: true,
  release: 'refund',
  refund: refundTokens,
  isState: (value): value is TokenBucketState => hasNumbers(value, 'tokens', 'at'),
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const capacity = capacityUnits(params);
    const units = unitsAt(state, t, params);
    const needed = cost * params.windowMs;
    if (needed > capacity || units < needed) {
      const resetMs = msToRefill(capacity - units, params);
      const outcome: Outcome<TokenBucketState> = {
        allowed: false,
        state: state ?? { tokens: capacity, at: t },
        limit: params.limit,
        remaining: Math.floor(units / params.windowMs),
        resetMs,
        retryAfterMs: needed > capacity ? Number.POSITIVE_INFINITY : msToRefill(needed - units, params),
        ttlMs: resetMs,
      };
      return outcome;
    }
    const left = units - needed;
    const resetMs = msToRefill(capacity - left, params);
    return {
      allowed: true,
      state: { tokens: left, at: t },
      limit: params.limit,
      remaining: Math.floor(left / params.windowMs),
      resetMs,
      retryAfterMs: 0,
      ttlMs: resetMs,
    };
  },
};

/**
 * What every algorithm decides with and returns. Kept apart from the registry (index.ts) so the algorithms
 * import nothing that names it.
 */
import type { CalendarPeriod } from '../base/duration.js';

export type { CalendarPeriod };

/** The numbers an algorithm decides with. Durations are milliseconds. */
export interface LimitParams {
  /** Requests per window, concurrent leases, or units per quota period. */
  readonly limit: number;
  /** Window length; the lease duration for `concurrency`; for a calendar quota, unused (0). */
  readonly windowMs: number;
  /** Capacity of token_bucket, gcra and leaky_bucket (defaults to `limit`); equals `limit` elsewhere. */
  readonly burst: number;
  /** Calendar quota period (UTC); absent for a fixed-duration quota. */
  readonly period?: CalendarPeriod;
}

/** What one algorithm step returns for one key. */
export interface Outcome<S> {
  readonly allowed: boolean;
  /** State to store if the request goes through; the unchanged input state when denied. */
  readonly state: S;
  readonly limit: number;
  /** Units still available after this request (never negative). */
  readonly remaining: number;
  /** Milliseconds until the counter is back to full capacity (or the window/period ends). */
  readonly resetMs: number;
  /**
   * 0 when allowed. When denied: the exact wait after which the same request, sent alone, is allowed.
   * `Infinity` when it can never be allowed (cost greater than capacity).
   */
  readonly retryAfterMs: number;
  /** leaky_bucket only: how long the request must wait before it proceeds. */
  readonly delayMs?: number;
  /** How long the committed state must be kept; afterwards it is equivalent to no state. */
  readonly ttlMs: number;
}

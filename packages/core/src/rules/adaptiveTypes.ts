/**
 * The contracts of adaptive limits and priority shedding: what a rule compiles to and what a store shares.
 * A leaf module (imports nothing) so the core contracts in types.ts can name these without a cycle.
 */

/** Priority classes, from the first shed to the last. */
export type PriorityClass = 'sheddable' | 'normal' | 'critical';

/** A rule's `priority`: a class, or the descriptor naming each request's class (`class` when it names none). */
export interface PriorityPolicy {
  readonly class: PriorityClass;
  readonly descriptor?: string;
}

/** A rule's `adaptive:` compiled: health targets and AIMD steps. Shares are fractions (0-1), durations ms. */
export interface AdaptivePolicy {
  /** Target share of 5xx responses; absent: not watched. */
  readonly errorRate?: number;
  /** Target latency percentile; absent: not watched. */
  readonly latency?: { readonly percentile: number; readonly maxMs: number };
  /** Multiplies the factor after an unhealthy interval. */
  readonly decrease: number;
  /** Added to the factor after a healthy interval. */
  readonly increase: number;
  /** The least factor. */
  readonly floor: number;
  readonly intervalMs: number;
  /** Fewer responses in an interval prove nothing bad. */
  readonly minSamples: number;
  /** Below this factor sheddable requests are refused. */
  readonly shedBelow: number;
}

/** An application's circuit breaker state for a backend, as `limiter.health(rule, state)` takes it. */
export type BreakerState = 'open' | 'half_open' | 'closed';

/** One gateway's outcomes for an adaptive rule since its last report, folded into the fleet's factor. */
export interface FactorReport {
  /** The rule across the fleet: `domain/rule` (a store hashes it into its key). */
  readonly id: string;
  readonly policy: AdaptivePolicy;
  /** Responses observed, of which 5xx (`errors`) and slower than the latency target (`slow`). */
  readonly requests: number;
  readonly errors: number;
  readonly slow: number;
  /** A circuit breaker's say: the factor becomes this and the interval restarts. */
  readonly pin?: number;
}

/**
 * The optional store capability that shares adaptive factors: folds a report into the rule's shared state
 * (adaptive/aimd.ts `adaptFactor`) and answers the factor now. Called a few times a second per rule at most,
 * never per request.
 */
export interface FactorStore {
  adaptFactor(report: FactorReport, now: number): number | Promise<number>;
}

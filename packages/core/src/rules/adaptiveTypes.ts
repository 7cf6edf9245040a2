/**
 * The compiled adaptive and priority parts of a rule (rules/adaptiveSchema.ts makes them). A leaf module.
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

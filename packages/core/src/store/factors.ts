import type { AdaptivePolicy } from '../rules/adaptiveTypes.js';
import type { FactorReport } from './contract.js';

/** A rule's shared factor and the outcomes gathered for the interval under way. */
export interface FactorState {
  readonly factor: number;
  /** When the interval under way started (ms). */
  readonly since: number;
  readonly requests: number;
  readonly errors: number;
  readonly slow: number;
}

/**
 * An interval with fewer than `minSamples` responses goes on gathering, so that a low limit (a factor at its
 * floor) is still judged on enough responses; after this many intervals a quiet rule is judged as it is
 * (healthy: too few responses prove nothing bad), so a backend nobody calls climbs back.
 */
export const QUIET_INTERVALS = 10;

/** The state of a rule never reported: full limit, an interval starting now. */
export function freshFactor(now: number): FactorState {
  return { factor: 1, since: now, requests: 0, errors: 0, slow: 0 };
}

/**
 * Whether an interval's outcomes miss a target. A latency percentile p is over its maximum exactly when more
 * than (100 - p)% of the responses were slower than the maximum, so gateways add up "slow" counts instead of
 * merging percentiles. Fewer than `minSamples` responses prove nothing bad.
 */
export function unhealthy(state: FactorState, policy: AdaptivePolicy): boolean {
  const { requests } = state;
  if (requests < policy.minSamples) return false;
  if (policy.errorRate !== undefined && state.errors / requests > policy.errorRate) return true;
  const slowShare = allowedSlowShare(policy);
  if (slowShare !== undefined && state.slow / requests > slowShare) return true;
  return false;
}

/** The share of responses that may be slower than the latency target: 0.01 for p99; undefined if not watched. */
export function allowedSlowShare(policy: AdaptivePolicy): number | undefined {
  return policy.latency === undefined ? undefined : (100 - policy.latency.percentile) / 100;
}

/** AIMD: multiplicative decrease when unhealthy, additive increase when healthy, kept within [floor, 1]. */
export function nextFactor(factor: number, bad: boolean, policy: AdaptivePolicy): number {
  const next = bad ? factor * policy.decrease : factor + policy.increase;
  return Math.min(1, Math.max(policy.floor, next));
}

/**
 * Folds one gateway's report into a rule's shared state at `now`. A pin (a circuit breaker's say) sets the
 * factor and restarts the interval; otherwise the counts add up and, once the interval has run, are judged
 * once and cleared. A clock that steps back only lengthens the interval under way.
 */
export function adaptFactor(state: FactorState | undefined, report: FactorReport, now: number): FactorState {
  const { policy } = report;
  if (report.pin !== undefined) return { ...freshFactor(now), factor: clampFactor(report.pin, policy) };
  const current = state ?? freshFactor(now);
  const gathered: FactorState = {
    factor: current.factor,
    since: current.since,
    requests: current.requests + report.requests,
    errors: current.errors + report.errors,
    slow: current.slow + report.slow,
  };
  if (!judgeable(gathered, now, policy)) return gathered;
  return { ...freshFactor(now), factor: nextFactor(gathered.factor, unhealthy(gathered, policy), policy) };
}

/** Whether the interval under way is over: it has run, with enough responses or for QUIET_INTERVALS. */
export function judgeable(state: FactorState, now: number, policy: AdaptivePolicy): boolean {
  const elapsed = now - state.since;
  if (elapsed < policy.intervalMs) return false;
  return state.requests >= policy.minSamples || elapsed >= QUIET_INTERVALS * policy.intervalMs;
}

/** A factor within [floor, 1]. */
export function clampFactor(factor: number, policy: AdaptivePolicy): number {
  return Math.min(1, Math.max(policy.floor, factor));
}

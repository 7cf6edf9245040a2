import { durationMs } from '../base/duration.js';
import { type AdaptiveSpec, type PrioritySpec, percentFraction } from './adaptiveSchema.js';
import type { AdaptivePolicy, PriorityPolicy } from './adaptiveTypes.js';

/** Defaults of `adaptive:` fields left out. */
export const ADAPTIVE_DEFAULTS = {
  decrease: 0.5,
  increase: 0.1,
  floor: 0.1,
  intervalMs: 1_000,
  minSamples: 20,
  shedBelow: 0.5,
} as const;

/** The rule fields these policies read, as validated. */
interface WithPolicies {
  readonly adaptive?: AdaptiveSpec;
  readonly priority?: PrioritySpec;
}

/** The compiled `adaptive` and `priority` of a rule; empty when it has neither. */
export function compileAdaptive(rule: WithPolicies): {
  adaptive?: AdaptivePolicy;
  priority?: PriorityPolicy;
} {
  return {
    ...(rule.adaptive === undefined ? {} : { adaptive: adaptivePolicy(rule.adaptive) }),
    ...(rule.priority === undefined ? {} : { priority: priorityPolicy(rule.priority) }),
  };
}

function adaptivePolicy(spec: AdaptiveSpec): AdaptivePolicy {
  const errorRate = spec.error_rate === undefined ? undefined : percentFraction(spec.error_rate);
  return {
    ...(errorRate === undefined ? {} : { errorRate }),
    ...(spec.latency === undefined
      ? {}
      : { latency: { percentile: spec.latency.percentile, maxMs: durationMs(spec.latency.max) ?? 0 } }),
    decrease: spec.decrease ?? ADAPTIVE_DEFAULTS.decrease,
    increase: spec.increase ?? ADAPTIVE_DEFAULTS.increase,
    floor: spec.floor ?? ADAPTIVE_DEFAULTS.floor,
    intervalMs: spec.interval === undefined ? ADAPTIVE_DEFAULTS.intervalMs : (durationMs(spec.interval) ?? 0),
    minSamples: spec.min_samples ?? ADAPTIVE_DEFAULTS.minSamples,
    shedBelow: spec.shed_below ?? ADAPTIVE_DEFAULTS.shedBelow,
  };
}

function priorityPolicy(spec: PrioritySpec): PriorityPolicy {
  if (typeof spec === 'string') return { class: spec };
  return { class: spec.default ?? 'normal', descriptor: spec.descriptor };
}

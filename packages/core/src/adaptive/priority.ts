import type { LimitParams } from '../algorithms/limits.js';
import type { PriorityClass, PriorityPolicy } from '../rules/adaptiveTypes.js';
import type { Descriptors } from '../rules/contract.js';

/**
 * Share of a concurrency rule's leases sheddable requests may hold even at full health: the rest is kept
 * for normal and critical requests, so a saturated concurrency rule sheds sheddable traffic first.
 */
export const SHEDDABLE_LEASE_SHARE = 0.5;

const CLASSES: ReadonlySet<string> = new Set<PriorityClass>(['sheddable', 'normal', 'critical']);

/** The request's class for a rule: its descriptor's value when that names a class, else the rule's class. */
export function classOf(policy: PriorityPolicy | undefined, descriptors: Descriptors): PriorityClass {
  if (policy === undefined) return 'normal';
  if (policy.descriptor !== undefined) {
    const named = descriptors[policy.descriptor];
    if (named !== undefined && CLASSES.has(named)) return named as PriorityClass;
  }
  return policy.class;
}

/**
 * The share of a rule's limit a class gets at factor `f` (1 at full health): critical √f, normal f,
 * sheddable f² - or nothing once f is below `shedBelow`. On a concurrency rule sheddable requests get at most
 * {@link SHEDDABLE_LEASE_SHARE} of that. So sheddable <= normal <= critical at every factor.
 */
export function shareOf(cls: PriorityClass, f: number, shedBelow: number, concurrent: boolean): number {
  if (cls === 'critical') return Math.sqrt(f);
  if (cls === 'normal') return f;
  const share = f < shedBelow ? 0 : f * f;
  return concurrent ? share * SHEDDABLE_LEASE_SHARE : share;
}

/** `n` scaled by a share: rounded down, at least 1 while the share is above 0 (a zero limit stays zero). */
export function scaled(n: number, share: number): number {
  if (share >= 1 || n === 0) return n;
  if (share <= 0) return 0;
  return Math.max(1, Math.floor(n * share));
}

/** A rule's params with limit and burst scaled by a share; the same object at a share of 1. */
export function scaledParams(params: LimitParams, share: number): LimitParams {
  if (share >= 1) return params;
  return { ...params, limit: scaled(params.limit, share), burst: scaled(params.burst, share) };
}

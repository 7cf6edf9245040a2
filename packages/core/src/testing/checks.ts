import type { LimitParams } from '../algorithms/limits.js';
import type { Check } from '../store/contract.js';

/** The contract suite's clock: a fixed instant, mid-window. */
export const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A limit of `limit` a minute, burst alike. */
export const perMinute = (limit: number): LimitParams => ({ limit, windowMs: 60_000, burst: limit });

/** A fixed_window check of 3 a minute, enforced, cost 1, with `overrides`. */
export function check(rule: string, tag: string, overrides: Partial<Check> = {}): Check {
  return {
    rule,
    tag,
    algorithm: 'fixed_window',
    params: perMinute(3),
    cost: 1,
    mode: 'enforce',
    ...overrides,
  };
}

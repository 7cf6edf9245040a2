import type { RuleResult } from '../observe/contract.js';

/** Share of a result's limit still available (0 for a zero limit). */
function roomLeft(result: RuleResult): number {
  return result.limit > 0 ? result.remaining / result.limit : 0;
}

/**
 * True when `a` constrains the client more than `b`: less room left relative to its limit; on a tie fewer
 * requests left, then the later reset, then the rule name. The order results arrive in never matters, so
 * one call (global and route rules together) and two calls (global, then route) show the same rule.
 */
export function constrainsMore(a: RuleResult, b: RuleResult): boolean {
  const room = roomLeft(a) - roomLeft(b);
  if (room !== 0) return room < 0;
  if (a.remaining !== b.remaining) return a.remaining < b.remaining;
  if (a.resetMs !== b.resetMs) return a.resetMs > b.resetMs;
  return a.rule < b.rule;
}

/**
 * The result whose numbers an allowed response's RateLimit headers show: the most constrained enforcing
 * rule that a store answered, among `results` and the one shown so far for the same request (`shown`).
 * Undefined when no such rule applied.
 */
export function shownResult(results: readonly RuleResult[], shown?: RuleResult): RuleResult | undefined {
  let best = shown;
  for (const result of results) {
    if (result.mode !== 'enforce' || result.failed) continue;
    if (best === undefined || constrainsMore(result, best)) best = result;
  }
  return best;
}

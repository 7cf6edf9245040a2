import type { Decision } from '../observe/contract.js';
import type { CompiledRules } from '../rules/contract.js';

/**
 * Retry-After seconds of an exact wait lengthened by `share * random` of itself (`random` in [0, 1)): never
 * shorter than the exact wait, whole seconds rounded up, at least 1. With `share` 0 it is the exact wait's.
 */
export function jitteredSeconds(exactMs: number, share: number, random: number): number {
  return Math.max(1, Math.ceil((exactMs * (1 + share * random)) / 1000));
}

/** Each table's rules with `retry_jitter`, by name; made once per table. */
const jitterTables = new WeakMap<CompiledRules, ReadonlyMap<string, number>>();

function jittersOf(table: CompiledRules): ReadonlyMap<string, number> {
  let jitters = jitterTables.get(table);
  if (jitters === undefined) {
    jitters = new Map(
      table.rules.flatMap((rule) => (rule.retryJitter === undefined ? [] : [[rule.name, rule.retryJitter]])),
    );
    jitterTables.set(table, jitters);
  }
  return jitters;
}

/**
 * The `retry_jitter` share of the rule that denied `decision`, looked up in the route's rules, then the
 * limiter's; 0 when it has none (the exact wait, the default).
 */
export function retryJitterOf(
  decision: Decision,
  global: CompiledRules,
  route: CompiledRules | undefined,
): number {
  const rule = decision.rule;
  if (rule === undefined || !Number.isFinite(decision.retryAfterMs)) return 0;
  return (route === undefined ? undefined : jittersOf(route).get(rule)) ?? jittersOf(global).get(rule) ?? 0;
}

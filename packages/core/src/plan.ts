import { randomUUID } from 'node:crypto';
import { costFor } from './cost.js';
import { rolloutBucket, tagFor } from './keys.js';
import type { Check, CompiledRule, Descriptors, Mode } from './types.js';

/** One matched rule turned into store work. */
export interface PlannedCheck {
  readonly rule: CompiledRule;
  readonly check: Check;
}

/** The mode a rule runs in for this tag: rollout shadows the keys whose stable hash falls outside it. */
export function effectiveMode(rule: CompiledRule, tag: string): Mode {
  if (rule.mode === 'shadow') return 'shadow';
  if (rule.rollout >= 100) return 'enforce';
  return rolloutBucket(tag) < rule.rollout ? 'enforce' : 'shadow';
}

/** Builds one Check per matched rule; rules whose key descriptors are missing are skipped. */
export function planChecks(
  rules: readonly CompiledRule[],
  descriptors: Descriptors,
  codeCost: number,
  secret: string | undefined,
): PlannedCheck[] {
  const planned: PlannedCheck[] = [];
  for (const rule of rules) {
    const tag = tagFor(rule, descriptors, secret);
    if (tag === undefined) continue;
    const check: Check = {
      rule: rule.name,
      tag,
      algorithm: rule.algorithm,
      params: rule.params,
      cost: costFor(rule.cost, descriptors, codeCost),
      mode: effectiveMode(rule, tag),
      ...(rule.algorithm === 'concurrency' ? { leaseId: randomUUID() } : {}),
    };
    planned.push({ rule, check });
  }
  return planned;
}

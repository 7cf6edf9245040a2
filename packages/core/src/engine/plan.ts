import { randomUUID } from 'node:crypto';
import { descriptorOf } from '../algorithms/index.js';
import type { LimitParams } from '../algorithms/limits.js';
import type { CompiledRule, Descriptors, Mode } from '../rules/contract.js';
import type { Check, CheckPolicy, PlannedCheck } from '../store/contract.js';
import { IDEMPOTENCY_DESCRIPTOR, rolloutBucket, type TagCache } from '../store/tags.js';
import { costFor } from './cost.js';

export type { PlannedCheck };

/**
 * The mode a rule runs in for this tag: rollout shadows the keys whose stable hash falls outside it, and a
 * dry run shadows every rule.
 */
export function effectiveMode(rule: CompiledRule, tag: string, dryRun = false): Mode {
  if (dryRun || rule.mode === 'shadow') return 'shadow';
  if (rule.rollout >= 100) return 'enforce';
  return rolloutBucket(tag) < rule.rollout ? 'enforce' : 'shadow';
}

/** The tag of sub-counter `shard` of a sharded counter: a distinct hash tag, so a distinct Cluster slot. */
export function shardTag(tag: string, shard: number): string {
  return `${tag}-${shard}`;
}

/** One shard's share of a limit: limit/shards rounded down, at least 1 (a zero limit stays zero). */
export function shardParams(params: LimitParams, shards: number): LimitParams {
  const share = (n: number) => (n === 0 ? 0 : Math.max(1, Math.floor(n / shards)));
  return { ...params, limit: share(params.limit), burst: share(params.burst) };
}

/** Per-shard params, computed once per compiled rule (the rule objects are immutable). */
const shardedParams = new WeakMap<CompiledRule, LimitParams>();

function paramsOf(rule: CompiledRule, shards: number): LimitParams {
  if (shards <= 1) return rule.params;
  let params = shardedParams.get(rule);
  if (params === undefined) {
    params = shardParams(rule.params, shards);
    shardedParams.set(rule, params);
  }
  return params;
}

/** Each compiled rule's store policy (bans, penalty, idempotency), made once. */
const policies = new WeakMap<CompiledRule, CheckPolicy>();

/** The store policy of a rule, or undefined when it has none (then the store does nothing more for it). */
export function policyOf(rule: CompiledRule): CheckPolicy | undefined {
  const { ban, penalty, idempotentMs, settle } = rule;
  // Most rules have none: four reads, no map lookup.
  if (ban === undefined && penalty === undefined && idempotentMs === undefined && settle !== true)
    return undefined;
  let policy = policies.get(rule);
  if (policy === undefined) {
    policy = {
      ...(ban === undefined ? {} : { ban }),
      ...(penalty === undefined ? {} : { penalty }),
      ...(idempotentMs === undefined ? {} : { idempotentMs }),
      ...(settle === true ? { debt: true } : {}),
    };
    policies.set(rule, policy);
  }
  return policy;
}

/** The request's idempotency id for a rule that remembers them, when the request carries one. */
function idempotencyOf(
  policy: CheckPolicy | undefined,
  descriptors: Descriptors,
  tags: TagCache,
): string | undefined {
  if (policy?.idempotentMs === undefined) return undefined;
  const value = descriptors[IDEMPOTENCY_DESCRIPTOR];
  return value === undefined || value === '' ? undefined : tags.idempotencyId(value);
}

/**
 * Builds one Check per matched rule; rules whose key descriptors are missing are skipped. A sharded rule's
 * check goes to one of its sub-counters, chosen at random (a hot key's load spreads evenly; one key's
 * hash would pick the same shard every time). Rollout still follows the key's own tag.
 */
export function planChecks(
  rules: readonly CompiledRule[],
  descriptors: Descriptors,
  codeCost: number,
  tags: TagCache,
  dryRun = false,
): PlannedCheck[] {
  const planned: PlannedCheck[] = [];
  for (const rule of rules) {
    const cached = tags.cachedTagFor(rule, descriptors);
    if (cached === undefined) continue;
    const keyTag = cached.tag;
    const shards = rule.shards ?? 1;
    const sharded = shards > 1;
    const tag = sharded ? shardTag(keyTag, Math.floor(Math.random() * shards)) : keyTag;
    const policy = policyOf(rule);
    // One shape for every check (leaseId, policy, idempotencyId and hint present, undefined unless used): call
    // sites stay monomorphic.
    const check: Check = {
      rule: rule.name,
      tag,
      algorithm: rule.algorithm,
      params: paramsOf(rule, shards),
      cost: costFor(rule.cost, descriptors, codeCost),
      mode: effectiveMode(rule, keyTag, dryRun),
      leaseId: descriptorOf(rule.algorithm).release === 'lease' ? randomUUID() : undefined,
      policy,
      idempotencyId: idempotencyOf(policy, descriptors, tags),
      // A sub-counter's tag is not the cached one: its hint would only ever mislead.
      hint: sharded ? undefined : cached,
    };
    planned.push({ rule, check });
  }
  return planned;
}

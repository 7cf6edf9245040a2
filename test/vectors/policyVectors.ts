import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AlgorithmName, BanPolicy, Check, CheckPolicy, CheckResult, Store } from '@sluice/core/store';
import { paramsOf, type StoredVectorCase } from '@sluice/core/testing';

/*
 * Shared vectors of the rule policies (bans and escalation, penalty, idempotency): test/vectors/policies/
 * *.json, one file per policy, run by every store like the algorithm vectors.
 */

/** What one policy step must answer. `retryAfterMs: null` means never; `bannedUntil: null`, no ban. */
export interface PolicyExpect {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly retryAfterMs: number | null;
  readonly resetMs?: number;
  readonly bannedUntil?: number | null;
  readonly banStarted?: boolean;
  readonly replayed?: boolean;
  /** A denial a ban counted (no ban started): the key's violations so far; null: none counted. */
  readonly violations?: number | null;
}

/** One request at `at`, with its idempotency id if any; or the lifting of the key's ban (`unban`). */
export type PolicyStep =
  | {
      readonly at: number;
      readonly cost: number;
      readonly idempotencyId?: string;
      readonly expect: PolicyExpect;
    }
  | { readonly at: number; readonly unban: true };

/** The policy of a case as stored: durations in ms. */
export interface StoredPolicy {
  readonly ban?: BanPolicy;
  readonly penalty?: number;
  readonly idempotentMs?: number;
}

/** A sequence of steps for one key of one rule. */
export interface PolicyCase {
  readonly name: string;
  readonly algorithm: AlgorithmName;
  readonly params: StoredVectorCase['params'];
  readonly policy: StoredPolicy;
  readonly steps: readonly PolicyStep[];
}

/** A step whose answer differs from the vector. */
export interface PolicyMismatch {
  readonly case: string;
  readonly step: number;
  readonly field: keyof PolicyExpect;
  readonly expected: unknown;
  readonly actual: unknown;
}

const directory = fileURLToPath(new URL('./policies/', import.meta.url));

/** Every policy case, by file (sorted) then in file order. */
export function loadPolicyVectors(): PolicyCase[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .flatMap(
      (name) => (JSON.parse(readFileSync(`${directory}${name}`, 'utf8')) as { cases: PolicyCase[] }).cases,
    );
}

/** Compares one answer with its expectation; optional fields are checked only when the vector gives them. */
export function comparePolicyStep(
  name: string,
  step: number,
  expect: PolicyExpect,
  answer: CheckResult,
): PolicyMismatch[] {
  const mismatches: PolicyMismatch[] = [];
  const actual: Record<keyof PolicyExpect, unknown> = {
    allowed: answer.allowed,
    remaining: answer.remaining,
    retryAfterMs: answer.retryAfterMs === Number.POSITIVE_INFINITY ? null : answer.retryAfterMs,
    resetMs: answer.resetMs,
    bannedUntil: answer.bannedUntil ?? null,
    banStarted: answer.banStarted ?? false,
    replayed: answer.replayed ?? false,
    violations: answer.violations ?? null,
  };
  for (const field of Object.keys(expect) as (keyof PolicyExpect)[]) {
    if (actual[field] !== expect[field])
      mismatches.push({ case: name, step, field, expected: expect[field], actual: actual[field] });
  }
  return mismatches;
}

/** What a store must offer to run the unban steps. */
export interface UnbanStore extends Store {
  unban(rule: string, tag: string): Promise<boolean>;
}

/**
 * Drives a store through one policy case, one `evaluate([check], at)` per request step, on the counter
 * {rule, tag} (a fresh one per case). Returns every mismatch.
 */
export async function runPolicyCase(
  store: UnbanStore,
  policyCase: PolicyCase,
  counter: { rule: string; tag: string },
): Promise<PolicyMismatch[]> {
  const policy: CheckPolicy = policyCase.policy;
  const params = paramsOf(policyCase);
  const mismatches: PolicyMismatch[] = [];
  for (const [index, step] of policyCase.steps.entries()) {
    if ('unban' in step) {
      await store.unban(counter.rule, counter.tag);
      continue;
    }
    const check: Check = {
      ...counter,
      algorithm: policyCase.algorithm,
      params,
      cost: step.cost,
      mode: 'enforce',
      policy,
      ...(step.idempotencyId === undefined ? {} : { idempotencyId: step.idempotencyId }),
    };
    const [result] = await store.evaluate([check], step.at);
    if (result === undefined)
      throw new Error(`${policyCase.name}: step ${index}: the store returned no result`);
    mismatches.push(...comparePolicyStep(policyCase.name, index, step.expect, result));
  }
  return mismatches;
}

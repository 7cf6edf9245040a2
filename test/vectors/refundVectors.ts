/**
 * Refund vectors (counting by outcome): a request charges, and a later step gives a request's charge back
 * as the engine does when the response's status is one the rule does not count. One file per algorithm in
 * test/vectors/refunds, run on the pure functions, MemoryStore, RedisStore (ioredis and node-redis) and a
 * Redis Cluster: every store refunds alike.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AlgorithmName, CheckResult, Lease, LimitParams, Store } from '@sluice/core/store';
import {
  compareStep,
  type Mismatch,
  paramsOf,
  type StoredVectorCase,
  type VectorExpect,
} from '@sluice/core/testing';
import { decideByName, releasedState } from '../../packages/core/src/algorithms/index.js';

/** A request at `at`, or the refund at `at` of the charge made by request step number `refund` (0-based). */
export type RefundStep =
  | { readonly at: number; readonly cost: number; readonly expect: VectorExpect }
  | { readonly at: number; readonly refund: number };

/** A case of one algorithm's refund file. */
export interface RefundCase extends Omit<StoredVectorCase, 'steps'> {
  readonly algorithm: AlgorithmName;
  readonly steps: readonly RefundStep[];
}

const directory = fileURLToPath(new URL('./refunds/', import.meta.url));

/** Every refund case, by algorithm file (sorted), each carrying its algorithm. */
export function loadRefundVectors(): RefundCase[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .flatMap((name) => {
      const file = JSON.parse(readFileSync(`${directory}${name}`, 'utf8')) as {
        algorithm: AlgorithmName;
        cases: Omit<RefundCase, 'algorithm'>[];
      };
      return file.cases.map((c) => ({ ...c, algorithm: file.algorithm }));
    });
}

/** A step's request, or throws naming the case: a refund must point back at a request step. */
function requestAt(vectorCase: RefundCase, index: number): { at: number; cost: number } {
  const step = vectorCase.steps[index];
  if (step === undefined || !('cost' in step))
    throw new Error(`${vectorCase.name}: refund of step ${index}, which is not a request`);
  return step;
}

/** The lease the engine makes for a charge of a `count` rule (see decision.ts). */
function chargeLease(
  vectorCase: RefundCase,
  counter: { rule: string; tag: string },
  params: LimitParams,
  charged: { at: number; cost: number },
  answer: CheckResult,
): Lease {
  const refund = {
    cost: charged.cost,
    params,
    at: charged.at,
    resetMs: answer.resetMs,
    count: 'failed' as const,
  };
  return { ...counter, algorithm: vectorCase.algorithm, id: '', scope: 'store', refund };
}

/** Runs a case on the pure functions: the state is kept here, committed only when allowed. */
export function runRefundOnAlgorithm(vectorCase: RefundCase): Mismatch[] {
  const params = paramsOf(vectorCase);
  const answers = new Map<number, CheckResult>();
  const mismatches: Mismatch[] = [];
  let state: unknown;
  vectorCase.steps.forEach((step, index) => {
    if ('refund' in step) {
      const answer = answers.get(step.refund);
      if (answer === undefined) throw new Error(`${vectorCase.name}: step ${index} refunds a step not run`);
      const lease = chargeLease(
        vectorCase,
        { rule: 'r', tag: 't' },
        params,
        requestAt(vectorCase, step.refund),
        answer,
      );
      state = releasedState(state, lease, step.at)?.state ?? state;
      return;
    }
    const outcome = decideByName(vectorCase.algorithm, state, step.at, params, step.cost);
    if (outcome.allowed) state = outcome.state;
    answers.set(index, outcome);
    mismatches.push(...compareStep(vectorCase.name, index, step.expect, outcome));
  });
  return mismatches;
}

/**
 * Drives a Store through one case on the counter {rule, tag} (a fresh one per case): `evaluate` per request,
 * `release` of the charge's lease per refund. Returns every mismatch.
 */
export async function runRefundCase(
  store: Store,
  vectorCase: RefundCase,
  counter: { rule: string; tag: string },
): Promise<Mismatch[]> {
  const params = paramsOf(vectorCase);
  const answers = new Map<number, CheckResult>();
  const mismatches: Mismatch[] = [];
  for (const [index, step] of vectorCase.steps.entries()) {
    if ('refund' in step) {
      const answer = answers.get(step.refund);
      if (answer === undefined) throw new Error(`${vectorCase.name}: step ${index} refunds a step not run`);
      await store.release(
        [chargeLease(vectorCase, counter, params, requestAt(vectorCase, step.refund), answer)],
        step.at,
      );
      continue;
    }
    const check = {
      ...counter,
      algorithm: vectorCase.algorithm,
      params,
      cost: step.cost,
      mode: 'enforce' as const,
    };
    const [result] = await store.evaluate([check], step.at);
    if (result === undefined)
      throw new Error(`${vectorCase.name}: step ${index}: the store returned no result`);
    answers.set(index, result);
    mismatches.push(...compareStep(vectorCase.name, index, step.expect, result));
  }
  return mismatches;
}

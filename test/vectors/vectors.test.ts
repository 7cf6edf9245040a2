import { MemoryStore } from '@sluice/core';
import {
  compareStep,
  loadVectors,
  type Mismatch,
  paramsOf,
  runVectorCase,
  type VectorCase,
} from '@sluice/core/testing';
import { describe, expect, it } from 'vitest';
import type { ConcurrencyState } from '../../packages/core/src/algorithms/index.js';
import { decideByName, releaseLease } from '../../packages/core/src/algorithms/index.js';
import { loadPolicyVectors, runPolicyCase } from './policyVectors.js';

const files = loadVectors();

/** Runs a case on the pure functions: the state is kept here, committed only when allowed. */
function runOnAlgorithm(vectorCase: VectorCase): Mismatch[] {
  const params = paramsOf(vectorCase);
  const mismatches: Mismatch[] = [];
  let state: unknown;
  vectorCase.steps.forEach((step, index) => {
    if ('release' in step) {
      state = releaseLease(state as ConcurrencyState | undefined, step.release, step.at);
      return;
    }
    const outcome = decideByName(vectorCase.algorithm, state, step.at, params, step.cost, step.leaseId);
    if (outcome.allowed) state = outcome.state;
    mismatches.push(...compareStep(vectorCase.name, index, step.expect, outcome));
  });
  return mismatches;
}

describe('vector files', () => {
  it('cover every algorithm', () => {
    expect(files.map((file) => file.algorithm)).toEqual([
      'concurrency',
      'first_request_window',
      'fixed_window',
      'gcra',
      'leaky_bucket',
      'quota',
      'sliding_log',
      'sliding_window',
      'token_bucket',
    ]);
  });
});

describe.each(files)('$algorithm vectors', ({ cases }) => {
  it.each(cases)('pure functions: $name', (vectorCase) => {
    expect(runOnAlgorithm(vectorCase)).toEqual([]);
  });

  it.each(cases)('MemoryStore: $name', async (vectorCase) => {
    const store = new MemoryStore();
    const mismatches = await runVectorCase(store, vectorCase, { rule: 'vector', tag: 'k' });
    await store.close();
    expect(mismatches).toEqual([]);
  });
});

describe('policy vectors (bans, penalty, idempotency) on MemoryStore', () => {
  it.each(loadPolicyVectors())('$name', async (policyCase) => {
    const store = new MemoryStore();
    const mismatches = await runPolicyCase(store, policyCase, { rule: 'vector', tag: 'k' });
    await store.close();
    expect(mismatches).toEqual([]);
  });
});

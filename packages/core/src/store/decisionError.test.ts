/**
 * An error raised while deciding (a state no algorithm can read, a check built by untyped code) leaves the
 * evaluator as a DecisionError naming the rule, never the key: a store tells it from an outage by its class.
 */
import { describe, expect, it } from 'vitest';
import type { AlgorithmName } from '../algorithms/index.js';
import { DecisionError, StoreError } from '../base/errors.js';
import type { Check, Lease } from './contract.js';
import { evaluateChecks, releaseLeases, type StateTable } from './evaluate.js';
import { MemoryStore } from './memory.js';

const TAG = 'tagSECRETSECRETSECRET';

function mapTable(): StateTable & { readonly states: Map<string, unknown> } {
  const states = new Map<string, unknown>();
  return {
    states,
    get: (rule, tag) => states.get(`${rule}/${tag}`),
    set: (rule, tag, state) => void states.set(`${rule}/${tag}`, state),
  };
}

const broken: Check = {
  rule: 'broken',
  tag: TAG,
  algorithm: 'no_such_algorithm' as AlgorithmName,
  params: { limit: 5, windowMs: 60_000, burst: 5 },
  cost: 1,
  mode: 'enforce',
};

function expectDecisionError(run: () => unknown): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(DecisionError);
  expect(thrown).toBeInstanceOf(StoreError);
  expect((thrown as DecisionError).rule).toBe('broken');
  expect((thrown as Error).cause).toBeInstanceOf(TypeError);
  expect((thrown as Error).message).not.toContain(TAG);
}

describe('an error while deciding', () => {
  it('is a DecisionError from the evaluator and from MemoryStore, and writes nothing', () => {
    const table = mapTable();
    const fine: Check = { ...broken, rule: 'fine', algorithm: 'fixed_window' };
    expectDecisionError(() => evaluateChecks([fine, broken], 1_000_000, table));
    expect(table.states.size).toBe(0);
    expectDecisionError(() => new MemoryStore().evaluateNow([broken], 1_000_000));
  });

  it('is a DecisionError when a hold is given back', () => {
    const lease: Lease = {
      rule: 'broken',
      tag: TAG,
      algorithm: 'no_such_algorithm' as AlgorithmName,
      id: '',
      scope: 'store',
      refund: { cost: 1, params: broken.params, at: 1_000_000 },
    };
    const table = mapTable();
    table.set('broken', TAG, { start: 960_000, count: 1 }, undefined);
    expectDecisionError(() => releaseLeases([lease], 1_000_000, table));
  });

  it('is not raised by a state of another algorithm: that counts afresh', () => {
    const table = mapTable();
    table.set('r', TAG, { start: 960_000, count: 5 }, undefined);
    const log: Check = { ...broken, rule: 'r', algorithm: 'sliding_log' };
    expect(evaluateChecks([log], 1_000_000, table)[0]).toMatchObject({ allowed: true, remaining: 4 });
    expect(table.states.get(`r/${TAG}`)).toEqual({ entries: [{ at: 1_000_000, cost: 1 }] });
  });
});

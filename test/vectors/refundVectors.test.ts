import { MemoryStore } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { loadRefundVectors, runRefundCase, runRefundOnAlgorithm } from './refundVectors.js';

const cases = loadRefundVectors();

describe('refund vectors', () => {
  it('cover every algorithm that refunds', () => {
    expect([...new Set(cases.map((c) => c.algorithm))]).toEqual([
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

  it.each(cases)('pure functions: $algorithm: $name', (vectorCase) => {
    expect(runRefundOnAlgorithm(vectorCase)).toEqual([]);
  });

  it.each(cases)('MemoryStore: $algorithm: $name', async (vectorCase) => {
    const store = new MemoryStore();
    const mismatches = await runRefundCase(store, vectorCase, { rule: 'refund', tag: 'k' });
    await store.close();
    expect(mismatches).toEqual([]);
  });
});

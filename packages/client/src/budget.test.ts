import { describe, expect, it } from 'vitest';
import { RetryBudget } from './budget.js';

describe('RetryBudget', () => {
  it('allows the reserve, then one retry per 1/ratio requests', () => {
    const budget = new RetryBudget({ ratio: 0.1, reserve: 2 });
    expect(budget.spend()).toBe(true);
    expect(budget.spend()).toBe(true);
    expect(budget.spend()).toBe(false);
    for (let i = 0; i < 9; i++) budget.earn();
    expect(budget.spend()).toBe(false); // 0.9 of a retry is not one
    budget.earn();
    expect(budget.spend()).toBe(true);
    expect(budget.spend()).toBe(false);
  });

  it('saves up no more than the reserve', () => {
    const budget = new RetryBudget({ ratio: 0.5, reserve: 3 });
    for (let i = 0; i < 100; i++) budget.earn();
    expect(budget.available).toBe(3);
  });

  it('keeps retries under the ratio of requests over a long outage', () => {
    const budget = new RetryBudget({ ratio: 0.1, reserve: 10 });
    let retries = 0;
    for (let i = 0; i < 10_000; i++) {
      budget.earn();
      // Every request fails; the client would retry each up to twice.
      if (budget.spend()) retries += 1;
      if (budget.spend()) retries += 1;
    }
    expect(retries).toBeLessThanOrEqual(10 + 10_000 * 0.1);
    expect(retries).toBeGreaterThanOrEqual(10_000 * 0.1 - 1);
  });
});

import { describe, expect, it } from 'vitest';
import { TokenBudget } from './tokenBudget.js';

describe('TokenBudget', () => {
  it('lets anything go until a response has said what the budget is', () => {
    const budget = new TokenBudget();
    expect(budget.waitFor(1_000_000, 0)).toBe(0);
  });

  it('takes estimates from what is left, then waits for the refill at the rate that makes it whole by the reset', () => {
    const budget = new TokenBudget();
    const first = budget.take(100);
    // 1000 tokens, 400 left, whole in 600 ms: 1 token a ms.
    budget.observe(first, { limit: 1000, remaining: 400, resetMs: 600 }, 0);
    expect(budget.waitFor(300, 0)).toBe(0);
    budget.take(300);
    budget.take(100);
    // 400 - 400 taken since: 0 left; 50 more come in 50 ms.
    expect(budget.waitFor(50, 0)).toBe(50);
    expect(budget.waitFor(50, 50)).toBe(0);
  });

  it('an answer to a later request replaces the estimates sent before it; an older one is ignored', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(10), { limit: 100, remaining: 50, resetMs: 500 }, 0);
    const a = budget.take(40);
    const b = budget.take(10);
    expect(budget.waitFor(10, 0)).toBe(100); // 0 left, 0.1 a ms
    budget.observe(b, { limit: 100, remaining: 90, resetMs: 100 }, 0);
    expect(budget.waitFor(90, 0)).toBe(0);
    budget.observe(a, { limit: 100, remaining: 0, resetMs: 1000 }, 0);
    expect(budget.waitFor(90, 0)).toBe(0);
  });

  it('a cost larger than the whole budget never fits: it goes, and the server answers', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(1), { limit: 100, remaining: 0, resetMs: 1000 }, 0);
    expect(budget.waitFor(101, 0)).toBe(0);
    expect(budget.waitFor(100, 0)).toBe(1000);
  });
});

import { describe, expect, it } from 'vitest';
import { TokenBudget } from './tokenBudget.js';

describe('TokenBudget', () => {
  it('lets anything go until a response has said what the budget is', () => {
    const budget = new TokenBudget();
    expect(budget.waitFor(1_000_000, 0)).toBe(0);
  });

  it('takes estimates from what is left, then waits for the refill at the rate that makes it whole by the reset', () => {
    const budget = new TokenBudget();
    // 1000 tokens, 400 left, whole in 600 ms: 1 token a ms.
    budget.observe(budget.take(100), { limit: 1000, remaining: 400, resetMs: 600 }, 0);
    expect(budget.waitFor(300, 0)).toBe(0);
    budget.take(300);
    budget.take(100);
    // 400 - 400 in flight: 0 left; 50 more come in 50 ms.
    expect(budget.waitFor(50, 0)).toBe(50);
    expect(budget.waitFor(50, 50)).toBe(0);
  });

  it('an answer that leaves out a request answered before it does not raise the budget above the belief', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(10), { limit: 100, remaining: 50, resetMs: 500 }, 0);
    const a = budget.take(40);
    const b = budget.take(10);
    expect(budget.waitFor(10, 0)).toBe(100); // 50 - 50 in flight: 0 left, 0.1 a ms
    // The server counted b first: its answer says 40 left, a still in flight (its 40 off).
    budget.observe(b, { limit: 100, remaining: 40, resetMs: 600 }, 0);
    expect(budget.waitFor(10, 0)).toBe(100);
    // a's answer, counted before b: 10 left by its word, but b came off since: 0 left.
    budget.observe(a, { limit: 100, remaining: 10, resetMs: 900 }, 0);
    expect(budget.waitFor(10, 0)).toBe(100);
  });

  it('an answer in order sets what the server says, tokens given back included', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(10), { limit: 100, remaining: 50, resetMs: 500 }, 0);
    // Settled below its estimate on the server: the next answer says more is left than believed.
    budget.observe(budget.take(40), { limit: 100, remaining: 45, resetMs: 550 }, 0);
    expect(budget.waitFor(45, 0)).toBe(0);
    expect(budget.waitFor(46, 0)).toBe(10);
  });

  it('a request that got no answer is no longer in flight', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(1), { limit: 100, remaining: 100, resetMs: 0 }, 0);
    const lost = budget.take(100);
    expect(budget.waitFor(50, 0)).toBe(0); // nothing says how fast it refills: goes
    budget.observe(lost, undefined, 0);
    expect(budget.waitFor(100, 0)).toBe(0);
  });

  it('a cost larger than the whole budget never fits: it goes, and the server answers', () => {
    const budget = new TokenBudget();
    budget.observe(budget.take(1), { limit: 100, remaining: 0, resetMs: 1000 }, 0);
    expect(budget.waitFor(101, 0)).toBe(0);
    expect(budget.waitFor(100, 0)).toBe(1000);
  });
});

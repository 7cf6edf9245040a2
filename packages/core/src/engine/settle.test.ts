import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import { createLimiter } from './engine.js';

const T = Date.UTC(2026, 10, 30, 10, 0, 0);

/** A model API's budgets: requests a minute per key, tokens a minute per key and per organisation. */
function budgets(clock: () => number = () => T) {
  const rules = compileRules({
    rules: [
      { name: 'rpm', key: ['key'], algorithm: 'fixed_window', limit: { requests: 5, per: '1m' } },
      {
        name: 'tpm',
        key: ['key'],
        algorithm: 'gcra',
        limit: { requests: 1000, per: '1m' },
        cost: { descriptor: 'max_tokens', max: 1000 },
        settle: true,
      },
      {
        name: 'org_tpm',
        key: ['org'],
        algorithm: 'sliding_window',
        limit: { requests: 1500, per: '1m' },
        cost: { descriptor: 'max_tokens', max: 1000 },
        settle: true,
      },
    ],
  });
  return createLimiter({ rules, clock });
}

const ask = (maxTokens: number, key = 'k1') => ({ key, org: 'o1', max_tokens: String(maxTokens) });
const remainingOf = (decision: { results: readonly { rule: string; remaining: number }[] }, rule: string) =>
  decision.results.find((r) => r.rule === rule)?.remaining;

describe('reserve and settle through the limiter', () => {
  it('reserves the estimate, then gives back what was not used, once', async () => {
    const limiter = budgets();
    const first = await limiter.check(ask(500));
    expect(remainingOf(first, 'tpm')).toBe(500);
    expect(await limiter.settle(first, 120)).toEqual({ outcome: 'settled', charged: 0, givenBack: 760 });
    expect(await limiter.settle(first, 0)).toEqual({ outcome: 'already_settled', charged: 0, givenBack: 0 });
    const next = await limiter.check(ask(0));
    expect(remainingOf(next, 'tpm')).toBe(880);
    expect(remainingOf(next, 'org_tpm')).toBe(1380);
  });

  it('charges a settle above the estimate, per rule when given per rule', async () => {
    const limiter = budgets();
    const first = await limiter.check(ask(100));
    const settled = await limiter.settle(first, { tpm: 300, org_tpm: 100 });
    expect(settled).toEqual({ outcome: 'settled', charged: 200, givenBack: 0 });
    const next = await limiter.check(ask(0));
    expect(remainingOf(next, 'tpm')).toBe(700);
    expect(remainingOf(next, 'org_tpm')).toBe(1400);
  });

  it('a settle beyond the budget leaves the key in debt: denied until it is paid off, to the ms', async () => {
    let now = T;
    const limiter = budgets(() => now);
    const first = await limiter.check(ask(1000));
    // 1000 reserved, 1600 used on tpm: 600 owed beyond its 1000 a minute.
    await limiter.settle(first, { tpm: 1600, org_tpm: 1000 });
    const denied = await limiter.check(ask(1));
    expect(denied.allowed).toBe(false);
    expect(denied.rule).toBe('tpm');
    // The next request needs room for the debt and its own token: 601 at 1000 a minute.
    expect(denied.retryAfterMs).toBe(36_060);
    now = T + 36_059;
    expect((await limiter.check(ask(1))).allowed).toBe(false);
    now = T + 36_060;
    const paid = await limiter.check(ask(1));
    expect(paid.allowed).toBe(true);
    expect(remainingOf(paid, 'tpm')).toBe(0);
  });

  it('admits the budgets all or nothing: a denial by one charges none', async () => {
    const limiter = budgets();
    await limiter.check(ask(1000, 'k1'));
    // org_tpm has 500 left: a request of 600 from another key is refused and k2's tpm keeps its 1000.
    const refused = await limiter.check(ask(600, 'k2'));
    expect(refused.allowed).toBe(false);
    expect(refused.rule).toBe('org_tpm');
    expect(refused.leases).toEqual([]);
    expect(await limiter.settle(refused, 10)).toEqual({ outcome: 'not_reserved', charged: 0, givenBack: 0 });
    expect(remainingOf(await limiter.check(ask(0, 'k2')), 'tpm')).toBe(1000);
  });

  it('answers bad input without throwing and keeps the decision open for a good settle', async () => {
    const limiter = budgets();
    const first = await limiter.check(ask(100));
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '12', { tpm: -3 }, null, [5]])
      expect((await limiter.settle(first, bad as never)).outcome).toBe('invalid_cost');
    expect((await limiter.settle({} as never, 5)).outcome).toBe('not_reserved');
    expect((await limiter.settle(undefined as never, 5)).outcome).toBe('not_reserved');
    expect(await limiter.settle(first, 99.2)).toEqual({ outcome: 'settled', charged: 0, givenBack: 0 });
  });

  it('a cancelled request gives its reservation back and cannot be settled after', async () => {
    const limiter = budgets();
    const first = await limiter.check(ask(400));
    await limiter.cancel(first);
    expect((await limiter.settle(first, 900)).outcome).toBe('already_settled');
    expect(remainingOf(await limiter.check(ask(0)), 'tpm')).toBe(1000);
  });

  it('a response end gives no reservation back: only settle does (an unsettled estimate stands)', async () => {
    const limiter = budgets();
    const first = await limiter.check(ask(400));
    await limiter.release(first, 200);
    expect(remainingOf(await limiter.check(ask(0)), 'tpm')).toBe(600);
  });

  it('refuses settle on rules it cannot apply to', () => {
    const build = (rule: Record<string, unknown>) => () =>
      compileRules({
        rules: [{ name: 'r', key: ['key'], limit: { requests: 5, per: '1m' }, settle: true, ...rule }],
      });
    expect(build({ count: 'failed' })).toThrow(/settle does not apply/);
    expect(build({ shards: 4 })).toThrow(/settle does not apply/);
    expect(build({ algorithm: 'concurrency', limit: { concurrent: 2 } })).toThrow(/settle does not apply/);
  });
});

import type { AlgorithmName } from '../algorithms/index.js';
import type { LimitParams } from '../algorithms/limits.js';
import type { Check, CheckResult, Lease, Store } from '../store/contract.js';
import { check, T0 } from './checks.js';
import type { TestApi } from './testApi.js';

/** A token budget: 100 tokens a minute. */
const TOKENS: LimitParams = { limit: 100, windowMs: 60_000, burst: 100 };

/** A check of a settled rule (`settle: true` makes its policy read the key's debt). */
function reserve(algorithm: AlgorithmName, cost: number, tag = 't1'): Check {
  return check('tokens', tag, { algorithm, params: TOKENS, cost, policy: { debt: true } });
}

/** The lease a settle above the estimate sends: `cost` units on top. */
function owed(algorithm: AlgorithmName, cost: number, tag = 't1'): Lease {
  return { rule: 'tokens', tag, algorithm, id: '', scope: 'store', owed: { cost, params: TOKENS } };
}

/** The lease a settle below the estimate sends: `cost` units given back of a charge made at `at`. */
function givenBack(algorithm: AlgorithmName, cost: number, at: number, answer: CheckResult): Lease {
  const refund = { cost, params: TOKENS, at, resetMs: answer.resetMs };
  return { rule: 'tokens', tag: 't1', algorithm, id: '', scope: 'store', refund };
}

/**
 * The contract's reserve-and-settle cases: a settle above the estimate charges the rest, one beyond the limit
 * leaves the key in debt (denied with the exact wait), one below gives back the difference.
 */
export function describeSettleContract(test: TestApi, current: () => Store): void {
  const { describe, it, expect } = test;
  const ask = async (algorithm: AlgorithmName, cost: number, now: number, tag = 't1') =>
    (await current().evaluate([reserve(algorithm, cost, tag)], now))[0]!;

  describe('settle', () => {
    for (const algorithm of ['fixed_window', 'token_bucket', 'gcra', 'sliding_window'] as const) {
      it(`charges a settle above the estimate within the limit (${algorithm})`, async () => {
        expect((await ask(algorithm, 10, T0)).remaining).toBe(90);
        await current().release([owed(algorithm, 30)], T0);
        expect((await ask(algorithm, 0, T0)).remaining).toBe(60);
      });

      it(`gives back a settle below the estimate (${algorithm})`, async () => {
        const charged = await ask(algorithm, 50, T0);
        await current().release([givenBack(algorithm, 40, T0, charged)], T0);
        expect((await ask(algorithm, 0, T0)).remaining).toBe(90);
      });

      it(`leaves a key in debt: its next admission waits exactly for room for both (${algorithm})`, async () => {
        await ask(algorithm, 90, T0);
        // 40 more: 10 fit, 30 are owed.
        await current().release([owed(algorithm, 40)], T0);
        const denied = await ask(algorithm, 0, T0 + 1_000);
        expect(denied.allowed).toBe(false);
        expect(denied.remaining).toBe(0);
        expect(denied.retryAfterMs >= 17_000).toBe(true);
        const paidAt = T0 + 1_000 + denied.retryAfterMs;
        expect((await ask(algorithm, 0, paidAt - 1)).allowed).toBe(false);
        expect((await ask(algorithm, 0, paidAt)).allowed).toBe(true);
        // Paid once: the debt is gone.
        expect((await ask(algorithm, 0, paidAt)).allowed).toBe(true);
        // Another key of the rule owes nothing.
        expect((await ask(algorithm, 1, T0 + 1_000, 't2')).allowed).toBe(true);
      });
    }

    // limiter.settle answers `givenBack` from these rules (engine/settle.ts): every store must keep them.
    it('gives nothing back once the window the estimate was charged in rolled over (fixed_window)', async () => {
      const charged = await ask('fixed_window', 50, T0 + 50_000);
      await current().release([givenBack('fixed_window', 40, T0 + 50_000, charged)], T0 + 60_000);
      expect((await ask('fixed_window', 0, T0 + 60_000)).remaining).toBe(100);
      expect((await ask('fixed_window', 60, T0 + 60_000)).remaining).toBe(40);
    });

    it('gives back only what has not drained yet, later charges aside (gcra)', async () => {
      const first = await ask('gcra', 50, T0);
      await ask('gcra', 30, T0);
      // 36 s later 60 have drained: the first charge (drained by 30 s) weighs nothing, 20 of the second do.
      await current().release([givenBack('gcra', 40, T0, first)], T0 + 36_000);
      expect((await ask('gcra', 0, T0 + 36_000)).remaining).toBe(80);
    });

    it('carries a debt into the next window (fixed_window)', async () => {
      await ask('fixed_window', 100, T0);
      await current().release([owed('fixed_window', 50)], T0);
      expect((await ask('fixed_window', 1, T0 + 10_000)).retryAfterMs).toBe(50_000);
      const next = await ask('fixed_window', 1, T0 + 60_000);
      expect(next.allowed).toBe(true);
      expect(next.remaining).toBe(49);
    });

    it('adds debts one after the other (gcra: 20 owed at 100 a minute wait 12 s)', async () => {
      await ask('gcra', 100, T0);
      await current().release([owed('gcra', 10)], T0);
      await current().release([owed('gcra', 10)], T0);
      expect((await ask('gcra', 0, T0)).retryAfterMs).toBe(12_000);
      expect((await ask('gcra', 0, T0 + 11_999)).allowed).toBe(false);
      const paid = await ask('gcra', 0, T0 + 12_000);
      expect(paid.allowed).toBe(true);
      expect(paid.remaining).toBe(0);
    });

    it('pays a debt larger than the counter as room comes, a full counter at a time', async () => {
      await ask('gcra', 100, T0);
      await current().release([owed('gcra', 250)], T0);
      for (const at of [T0, T0 + 60_000, T0 + 120_000]) {
        const denied = await ask('gcra', 1, at);
        expect(denied.allowed).toBe(false);
        expect(denied.retryAfterMs).toBe(60_000);
      }
      const paid = await ask('gcra', 1, T0 + 180_000);
      expect(paid.allowed).toBe(true);
      expect(paid.remaining).toBe(49);
    });

    it('settles several budgets in one call, and a denial by one commits none', async () => {
      const both = (cost: number, now: number) =>
        current().evaluate(
          [reserve('fixed_window', cost), { ...reserve('quota', cost), rule: 'daily' }],
          now,
        );
      await both(60, T0);
      await current().release(
        [
          owed('fixed_window', 50),
          { ...owed('quota', 50), rule: 'daily', owed: { cost: 50, params: TOKENS } },
        ],
        T0,
      );
      const [minute, day] = await both(1, T0 + 1_000);
      expect(minute!.allowed).toBe(false);
      expect(day!.allowed).toBe(false);
    });
  });
}

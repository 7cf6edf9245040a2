import type { AlgorithmName } from '../algorithms/index.js';
import type { CheckResult, Lease, Store } from '../store/contract.js';
import { check, perMinute, T0 } from './checks.js';
import type { TestApi } from './testApi.js';

/** The lease the engine makes for a charge of a rule counting by outcome (`count: failed`). */
function chargeLease(algorithm: AlgorithmName, at: number, answer: CheckResult): Lease {
  const refund = { cost: 1, params: perMinute(3), at, resetMs: answer.resetMs, count: 'failed' as const };
  return { rule: 'counted', tag: 't1', algorithm, id: '', scope: 'store', refund };
}

/** The contract's refund cases (counting by outcome, lease releases), on the store `current` gives. */
export function describeRefundContract(test: TestApi, current: () => Store): void {
  const { describe, it, expect } = test;
  const first = async (algorithm: AlgorithmName, now: number) =>
    (await current().evaluate([check('counted', 't1', { algorithm })], now))[0]!;

  describe('refunds', () => {
    for (const algorithm of ['fixed_window', 'token_bucket'] as const) {
      it(`gives a charge back when the response is not counted (${algorithm})`, async () => {
        const charged = await first(algorithm, T0);
        expect(charged.remaining).toBe(2);
        await current().release([chargeLease(algorithm, T0, charged)], T0);
        expect((await first(algorithm, T0)).remaining).toBe(2);
      });
    }

    it('gives nothing back of a charge whose window has passed', async () => {
      const charged = await first('fixed_window', T0);
      expect((await first('fixed_window', T0 + 60_000)).remaining).toBe(2);
      await current().release([chargeLease('fixed_window', T0, charged)], T0 + 60_001);
      expect((await first('fixed_window', T0 + 60_002)).remaining).toBe(1);
    });

    it("keeps a key's expiry when a lease release gives no new one", async () => {
      const params = { limit: 1, windowMs: 30_000, burst: 1 };
      const lease = (id: string) => check('conc', 't1', { algorithm: 'concurrency', params, leaseId: id });
      await current().evaluate([lease('l1')], T0);
      await current().release(
        [{ rule: 'conc', tag: 't1', algorithm: 'concurrency', id: 'l1', scope: 'store' }],
        T0 + 1,
      );
      expect((await current().evaluate([lease('l2')], T0 + 10_000))[0]!.allowed).toBe(true);
      await current().release(
        [{ rule: 'conc', tag: 't1', algorithm: 'concurrency', id: 'l9', scope: 'store' }],
        T0 + 20_000,
      );
      expect((await current().evaluate([lease('l3')], T0 + 39_999))[0]!.allowed).toBe(false);
      expect((await current().evaluate([lease('l3')], T0 + 40_000))[0]!.allowed).toBe(true);
    });
  });
}

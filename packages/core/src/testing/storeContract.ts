import type { LimitParams } from '../algorithms/limits.js';
import type { Check, Store } from '../store/contract.js';
import { describePolicyContract } from './policyContract.js';
import { describeRefundContract } from './refundContract.js';
import { describeRenewContract } from './renewContract.js';
import { describeSettleContract } from './settleContract.js';
import type { TestApi } from './testApi.js';

// The store contract suite, published for store authors; it takes the test runner's functions (testApi.ts).

/** Builds a fresh, empty store for one test; `cleanup` closes it. */
export type StoreFactory = () => Promise<{ store: Store; cleanup?: () => Promise<void> }>;

import { check, perMinute, T0 } from './checks.js';

async function repeat(store: Store, checks: Check[], times: number, now = T0) {
  const results = [];
  for (let i = 0; i < times; i++) results.push(await store.evaluate(checks, now));
  return results;
}

/**
 * The behaviour every Store must have, whatever it counts in, as test cases of your runner. Run it once per store:
 * `describeStoreContract(vitest, 'MyStore', async () => ({store: new MyStore()}))`, with `import * as vitest from
 * 'vitest'` (or Jest's globals).
 */
export function describeStoreContract(test: TestApi, name: string, factory: StoreFactory): void {
  const { describe, it, expect, beforeEach, afterEach } = test;
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, cleanup } = await factory());
    });
    afterEach(async () => {
      await store.close();
      await cleanup?.();
    });

    it('answers one result per check, in order', async () => {
      const results = await store.evaluate(
        [check('a', 't1', { params: perMinute(5) }), check('b', 't1', { params: perMinute(7) })],
        T0,
      );
      expect(results.map((r) => [r.allowed, r.limit, r.remaining])).toEqual([
        [true, 5, 4],
        [true, 7, 6],
      ]);
    });

    it('counts up to the limit, then denies with a retry time', async () => {
      const results = (await repeat(store, [check('a', 't1')], 4)).map((r) => r[0]!);
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(results[3]!.remaining).toBe(0);
      expect(results[3]!.retryAfterMs).toBe(60_000 - (T0 % 60_000));
    });

    it('keeps counters apart by rule and by tag', async () => {
      await repeat(store, [check('a', 't1')], 3);
      const [other] = await store.evaluate([check('a', 't2')], T0);
      const [otherRule] = await store.evaluate([check('b', 't1')], T0);
      expect(other!.allowed && otherRule!.allowed).toBe(true);
      expect(other!.remaining).toBe(2);
    });

    it('commits nothing in any check of a call that an enforcing check denies', async () => {
      const wide = check('wide', 't1', { params: perMinute(100) });
      const narrow = check('narrow', 't1', { params: perMinute(1) });
      await store.evaluate([narrow], T0);
      const denied = await store.evaluate([wide, narrow], T0);
      expect(denied.map((r) => r.allowed)).toEqual([true, false]);
      const [after] = await store.evaluate([wide], T0);
      expect(after!.remaining).toBe(99); // only this call counted: the denied one consumed nothing
    });

    it('lets a shadow check that denies pass the others through', async () => {
      const enforced = check('enforced', 't1', { params: perMinute(100) });
      const shadow = check('shadow', 't1', { params: perMinute(1), mode: 'shadow' });
      await store.evaluate([shadow], T0);
      const results = await store.evaluate([enforced, shadow], T0);
      expect(results.map((r) => r.allowed)).toEqual([true, false]);
      const [after] = await store.evaluate([enforced], T0);
      expect(after!.remaining).toBe(98); // the mixed call counted, then this one
    });

    it('denies a cost above capacity with no retry time, and consumes nothing', async () => {
      const [big] = await store.evaluate([check('a', 't1', { cost: 4 })], T0);
      expect(big!.allowed).toBe(false);
      expect(big!.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
      const [small] = await store.evaluate([check('a', 't1', { cost: 3 })], T0);
      expect(small!.allowed).toBe(true);
    });

    it('starts counting afresh in the next window', async () => {
      await repeat(store, [check('a', 't1')], 3);
      const [next] = await store.evaluate([check('a', 't1')], T0 + 60_000);
      expect(next!.allowed).toBe(true);
      expect(next!.remaining).toBe(2);
    });

    describe('leaky_bucket places', () => {
      const params: LimitParams = { limit: 1, windowMs: 1000, burst: 2 };
      const leaky = check('smooth', 't1', { algorithm: 'leaky_bucket', params });
      const place = {
        rule: 'smooth',
        tag: 't1',
        algorithm: 'leaky_bucket' as const,
        id: '',
        scope: 'store' as const,
        refund: { cost: 1, params },
      };

      it('gives a queued place back when its request is given up', async () => {
        expect((await store.evaluate([leaky], T0))[0]).toMatchObject({ allowed: true, delayMs: 0 });
        expect((await store.evaluate([leaky], T0))[0]).toMatchObject({ allowed: true, delayMs: 1000 });
        expect((await store.evaluate([leaky], T0))[0]!.allowed).toBe(false);
        await store.release([place], T0 + 10);
        expect((await store.evaluate([leaky], T0 + 10))[0]).toMatchObject({ allowed: true, delayMs: 990 });
      });

      it('never refunds below an empty queue', async () => {
        await store.evaluate([leaky], T0);
        await store.release([place, place, place], T0);
        expect((await store.evaluate([leaky], T0))[0]).toMatchObject({ allowed: true, delayMs: 0 });
        expect((await store.evaluate([leaky], T0))[0]).toMatchObject({ allowed: true, delayMs: 1000 });
        expect((await store.evaluate([leaky], T0))[0]!.allowed).toBe(false);
      });
    });

    describe('concurrency leases', () => {
      const lease = (id: string): Check =>
        check('conc', 't1', {
          algorithm: 'concurrency',
          params: { limit: 2, windowMs: 30_000, burst: 2 },
          leaseId: id,
        });
      const held = (id: string) => ({
        rule: 'conc',
        tag: 't1',
        algorithm: 'concurrency' as const,
        id,
        scope: 'store' as const,
      });

      it('holds at most the limit, and frees a slot on release (idempotently)', async () => {
        expect((await store.evaluate([lease('l1')], T0))[0]!.allowed).toBe(true);
        expect((await store.evaluate([lease('l2')], T0))[0]!.allowed).toBe(true);
        expect((await store.evaluate([lease('l3')], T0))[0]!.allowed).toBe(false);
        await store.release([held('l1')], T0 + 1);
        await store.release([held('l1')], T0 + 2);
        expect((await store.evaluate([lease('l4')], T0 + 3))[0]!.allowed).toBe(true);
        expect((await store.evaluate([lease('l5')], T0 + 3))[0]!.allowed).toBe(false);
      });

      it('expires a lease that is never released', async () => {
        await store.evaluate([lease('l1')], T0);
        await store.evaluate([lease('l2')], T0);
        expect((await store.evaluate([lease('l3')], T0 + 29_999))[0]!.allowed).toBe(false);
        expect((await store.evaluate([lease('l3')], T0 + 30_000))[0]!.allowed).toBe(true);
      });
    });

    describePolicyContract(test, () => store);
    describeRefundContract(test, () => store);
    describeSettleContract(test, () => store);
    describeRenewContract(test, () => store);
  });
}

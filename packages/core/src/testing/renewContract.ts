import type { Lease, Store } from '../store/contract.js';
import { check, T0 } from './checks.js';
import type { TestApi } from './testApi.js';

const LEASE_MS = 2_000;
const params = { limit: 2, windowMs: LEASE_MS, burst: 2 };

/** The lease the engine makes for an allowed concurrency check (see engine/decision.ts). */
function held(id: string, tag = 'r1'): Lease {
  return { rule: 'streams', tag, algorithm: 'concurrency', id, scope: 'store', leaseMs: LEASE_MS };
}

/**
 * The contract's renewal cases (a long-lived connection's heartbeat, `store.renew`), on the store `current`
 * gives: a renewed lease outlives its lease time, a released or expired one is not brought back.
 */
export function describeRenewContract(test: TestApi, current: () => Store): void {
  const { describe, it, expect } = test;
  const take = async (id: string, now: number, tag = 'r1') =>
    (
      await current().evaluate(
        [check('streams', tag, { algorithm: 'concurrency', params, leaseId: id })],
        now,
      )
    )[0]!;
  const renew = (leases: Lease[], now: number) => {
    const store = current();
    expect(typeof store.renew).toBe('function');
    return store.renew!(leases, now);
  };

  describe('lease renewal', () => {
    it('keeps renewed leases held past several lease lifetimes, in one call for all', async () => {
      expect((await take('a', T0)).allowed).toBe(true);
      expect((await take('b', T0)).allowed).toBe(true);
      expect((await take('x', T0, 'r2')).allowed).toBe(true);
      for (let at = T0 + 600; at <= T0 + 4_200; at += 600)
        await renew([held('a'), held('b'), held('x', 'r2')], at);
      const late = await take('c', T0 + 4_500);
      expect(late.allowed).toBe(false);
      expect(late.retryAfterMs > 0).toBe(true);
      expect((await take('y', T0 + 4_500, 'r2')).allowed).toBe(true);
    });

    it('lets a renewed lease expire once renewals stop (the holder died)', async () => {
      await take('a', T0);
      await take('b', T0);
      await renew([held('a'), held('b')], T0 + 1_500);
      expect((await take('c', T0 + 3_400)).allowed).toBe(false);
      expect((await take('c', T0 + 3_501)).allowed).toBe(true);
    });

    it('admits again when a renewed lease is released', async () => {
      await take('a', T0);
      await take('b', T0);
      await renew([held('a'), held('b')], T0 + 1_500);
      await current().release([held('a')], T0 + 1_600);
      expect((await take('c', T0 + 1_700)).allowed).toBe(true);
    });

    it('does not bring back a released or expired lease', async () => {
      // a released at T0 + 100; b expires at T0 + 2_000 and c (taken at T0 + 300) at T0 + 2_300.
      await take('a', T0);
      await take('b', T0);
      await current().release([held('a')], T0 + 100);
      await renew([held('a')], T0 + 200);
      expect((await take('c', T0 + 300)).allowed).toBe(true);
      await renew([held('b')], T0 + 2_100);
      expect((await take('d', T0 + 2_150)).allowed).toBe(true);
    });
  });
}

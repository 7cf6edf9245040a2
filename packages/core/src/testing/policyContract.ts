import type { Check, CheckPolicy, Store } from '../store/contract.js';
import { check, perMinute, T0 } from './checks.js';
import type { TestApi } from './testApi.js';

/** A check of `rule` under `policy`, on key t1. */
function withPolicy(rule: string, policy: CheckPolicy, overrides: Partial<Check> = {}): Check {
  return check(rule, 't1', { policy, ...overrides });
}

/** The contract's policy cases (bans, penalty, idempotency), on the store `current` gives for each test. */
export function describePolicyContract(test: TestApi, current: () => Store): void {
  const { describe, it, expect } = test;
  const first = async (c: Check, now: number) => (await current().evaluate([c], now))[0]!;

  describe('policies', () => {
    const ban = { after: 2, withinMs: 60_000, forMs: 120_000 };
    const banned = withPolicy('banned', { ban }, { params: perMinute(1) });

    it('bans a key at the `after`-th denial, denies it until the ban ends, then counts again', async () => {
      expect((await first(banned, T0)).allowed).toBe(true);
      expect((await first(banned, T0 + 1)).bannedUntil).toBe(undefined);
      expect(await first(banned, T0 + 2)).toMatchObject({
        allowed: false,
        bannedUntil: T0 + 120_002,
        banStarted: true,
      });
      // Next window: the limit alone would allow it, the ban does not.
      expect(await first(banned, T0 + 60_000)).toMatchObject({
        allowed: false,
        retryAfterMs: 60_002,
        banStarted: false,
      });
      expect((await first(banned, T0 + 120_002)).allowed).toBe(true);
    });

    it('lifts a ban on unban (true once: the key then has none)', async () => {
      await first(banned, T0);
      await first(banned, T0 + 1);
      await first(banned, T0 + 2);
      expect(await current().unban?.('banned', 't1')).toBe(true);
      expect(await current().unban?.('banned', 't1')).toBe(false);
      expect((await first(banned, T0 + 60_000)).allowed).toBe(true);
    });

    it('charges a denied request the penalty, as far as the limit has room', async () => {
      const costly = withPolicy('pen', { penalty: 2 }, { params: perMinute(5), cost: 3 });
      expect(await first(costly, T0)).toMatchObject({ allowed: true, remaining: 2 });
      expect((await first(costly, T0)).allowed).toBe(false);
      // Without the penalty 2 units were left for this one.
      expect(await first({ ...costly, cost: 1 }, T0)).toMatchObject({ allowed: false, remaining: 0 });
    });

    it('answers a retry with the same idempotency id without charging it, until the marker expires', async () => {
      const idem = (id: string) => withPolicy('idem', { idempotentMs: 30_000 }, { idempotencyId: id });
      expect(await first(idem('i1'), T0)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await first(idem('i1'), T0 + 1)).toMatchObject({ allowed: true, remaining: 2, replayed: true });
      expect(await first(idem('i2'), T0 + 2)).toMatchObject({ allowed: true, remaining: 1 });
      const late = await first(idem('i1'), T0 + 30_000);
      expect([late.remaining, late.replayed]).toEqual([0, undefined]);
    });

    it('marks no idempotency id of a call another enforcing check denied', async () => {
      const idem = withPolicy('idem', { idempotentMs: 30_000 }, { idempotencyId: 'i1' });
      const narrow = check('narrow', 't1', { params: perMinute(1) });
      await first(narrow, T0);
      const denied = await current().evaluate([idem, narrow], T0);
      expect(denied.map((r) => r.allowed)).toEqual([true, false]);
      const retry = await first(idem, T0 + 1);
      expect([retry.remaining, retry.replayed]).toEqual([2, undefined]);
    });
  });
}

import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { Lease } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { createLimiter } from './engine.js';
import { LeaseKeeper, MIN_RENEW_INTERVAL_MS } from './leaseKeeper.js';

const rules = compileRules({
  domain: 'keeper',
  rules: [
    {
      name: 'streams',
      match: {},
      key: ['user'],
      algorithm: 'concurrency',
      limit: { concurrent: 1000, lease: '600ms' },
    },
  ],
});

/** A MemoryStore that records each renew call's leases. */
class CountingStore extends MemoryStore {
  readonly calls: (readonly Lease[])[] = [];
  override renew(leases: readonly Lease[], now: number): Promise<void> {
    this.calls.push(leases);
    return super.renew(leases, now);
  }
}

describe('LeaseKeeper', () => {
  it('renews every held lease of the limiter in ONE store call per round, not one per connection', async () => {
    const store = new CountingStore();
    const limiter = createLimiter({ rules, store });
    const decisions = await Promise.all(
      Array.from({ length: 50 }, (_, i) => limiter.check({ user: `u${i % 5}` })),
    );
    for (const d of decisions) limiter.hold(d);
    await new Promise((resolve) => setTimeout(resolve, 450));
    // A heartbeat every 200 ms (a third of 600 ms): about two rounds by now, each one call with all 50 leases.
    expect(store.calls.length >= 1 && store.calls.length <= 2).toBe(true);
    expect(store.calls.every((leases) => leases.length === 50)).toBe(true);
    for (const d of decisions) await limiter.release(d);
    const after = store.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(store.calls.length).toBe(after);
    await limiter.close();
  });

  it('ignores decisions holding no lease, and stops its timer with the last drop', async () => {
    let rounds = 0;
    const keeper = new LeaseKeeper(async () => {
      rounds++;
    });
    const lease: Lease = {
      rule: 'r',
      tag: 't',
      algorithm: 'concurrency',
      id: 'a',
      scope: 'store',
      leaseMs: 30,
    };
    const refund: Lease = {
      ...lease,
      id: '',
      refund: { cost: 1, params: { limit: 1, windowMs: 1, burst: 1 } },
    };
    const none = { leases: [refund] } as unknown as Parameters<LeaseKeeper['hold']>[0];
    const one = { leases: [lease] } as unknown as Parameters<LeaseKeeper['hold']>[0];
    keeper.hold(none);
    expect(keeper.size).toBe(0);
    keeper.hold(one);
    await new Promise((resolve) => setTimeout(resolve, MIN_RENEW_INTERVAL_MS * 2.5));
    // A 30 ms lease is renewed no faster than MIN_RENEW_INTERVAL_MS.
    expect(rounds >= 1 && rounds <= 2).toBe(true);
    keeper.drop(one);
    const before = rounds;
    await new Promise((resolve) => setTimeout(resolve, MIN_RENEW_INTERVAL_MS * 2));
    expect(rounds).toBe(before);
  });
});

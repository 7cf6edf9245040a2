import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { Lease } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { createLimiter } from './engine.js';
import { LeaseKeeper, MIN_RENEW_INTERVAL_MS, type RoundOutcome } from './leaseKeeper.js';

/** A round every store took, every lease found. */
const IN_FULL: RoundOutcome = { renewed: true, missing: 0 };

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
  override renew(leases: readonly Lease[], now: number): Promise<number> {
    this.calls.push(leases);
    return super.renew(leases, now);
  }
}

/** A held concurrency lease of `leaseMs`. */
function leaseOf(leaseMs: number): Lease {
  return { rule: 'r', tag: 't', algorithm: 'concurrency', id: 'a', scope: 'store', leaseMs };
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
      return IN_FULL;
    });
    const lease = leaseOf(30);
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

describe('LeaseKeeper tells when leases may have lapsed', () => {
  const decision = { leases: [leaseOf(900)] } as unknown as Parameters<LeaseKeeper['hold']>[0];

  function keeperWith(round: () => Promise<RoundOutcome>) {
    let mono = 0;
    const lines: string[] = [];
    const errors: [string, Error][] = [];
    const keeper = new LeaseKeeper(round, {
      logger: { warn: (line) => lines.push(line) },
      observer: { onStoreError: (kind, error) => errors.push([kind, error]) },
      monotonic: () => mono,
    });
    keeper.hold(decision);
    keeper.stop(); // rounds are sent by hand here, on the hand-moved monotonic clock
    return { keeper, lines, errors, advance: (ms: number) => (mono += ms) };
  }

  it('a failed round: one line for the episode, one when a round succeeds in time again', async () => {
    let ok = false;
    const { keeper, lines, errors, advance } = keeperWith(async () => ({ renewed: ok, missing: 0 }));
    advance(300);
    await keeper.renewNow();
    advance(300);
    await keeper.renewNow();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /a lease renewal round failed: .*more may be admitted than the limit.*\[SLUICE_LEASES_UNRENEWED\]$/,
    );
    expect(errors).toEqual([]); // the store's own errors reach the observer from renewRound
    ok = true;
    advance(200); // 800 ms since held: still within the 900 ms lease
    await keeper.renewNow();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/renewed in time again after 500 ms \[SLUICE_LEASES_RENEWED\]$/);
  });

  it('a round sent after a lease ended (a stalled loop) is a time-out for the observer and logged once', async () => {
    const { keeper, lines, errors, advance } = keeperWith(async () => IN_FULL);
    advance(300);
    await keeper.renewNow();
    expect(lines).toEqual([]);
    advance(1500); // 1500 ms since the last round: 600 ms past the 900 ms lease
    await keeper.renewNow();
    expect(errors.map(([kind, error]) => [kind, (error as { code?: string }).code])).toEqual([
      ['timeout', 'ERR_SLUICE_STORE_TIMEOUT'],
    ]);
    expect(errors[0]![1].message).toMatch(/600 ms after a held lease's end/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\[SLUICE_LEASES_UNRENEWED\]$/);
    advance(300); // in time again
    await keeper.renewNow();
    expect(lines[1]).toMatch(/\[SLUICE_LEASES_RENEWED\]$/);
    expect(errors).toHaveLength(1);
  });

  it('leases gone from the store (a restarted Redis, an eviction): an error for the observer, logged once', async () => {
    let missing = 1;
    const { keeper, lines, errors, advance } = keeperWith(async () => ({ renewed: true, missing }));
    advance(300);
    await keeper.renewNow();
    advance(300);
    await keeper.renewNow();
    expect(errors.map(([kind, error]) => [kind, (error as { code?: string }).code])).toEqual([
      ['error', 'ERR_SLUICE_LEASE_LOST'],
      ['error', 'ERR_SLUICE_LEASE_LOST'],
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /1 held lease\(s\) were gone from the store when renewed.*\[SLUICE_LEASES_UNRENEWED\]$/,
    );
    missing = 0;
    advance(300);
    await keeper.renewNow();
    expect(lines[1]).toMatch(/\[SLUICE_LEASES_RENEWED\]$/);
  });
});

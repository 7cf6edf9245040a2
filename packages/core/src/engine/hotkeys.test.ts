import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { RuleSpec } from '../rules/schema.js';
import type { Check, CheckResult, Lease, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { createLimiter } from './engine.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A MemoryStore that records every call and the checks it was given. */
class RecordingStore implements Store {
  readonly inner = new MemoryStore();
  readonly calls: Check[][] = [];
  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.calls.push([...checks]);
    return this.inner.evaluate(checks, now);
  }
  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.inner.release(leases, now);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

function limiterWith(rule: Partial<RuleSpec>, extra: RuleSpec[] = [], clock = () => T0) {
  const store = new RecordingStore();
  const rules = compileRules({
    rules: [
      { name: 'everyone', global: true, key: [], limit: { requests: 100, per: '60s' }, ...rule },
      ...extra,
    ],
  });
  return { store, limiter: createLimiter({ rules, store, clock }) };
}

async function allowedOf(limiter: ReturnType<typeof limiterWith>['limiter'], n: number, descriptors = {}) {
  let allowed = 0;
  for (let i = 0; i < n; i++) if ((await limiter.check(descriptors)).allowed) allowed++;
  return allowed;
}

describe('shards', () => {
  it('splits a counter over N sub-counters of limit/N, each its own tag', async () => {
    const { store, limiter } = limiterWith({ shards: 4 });
    expect(await allowedOf(limiter, 300)).toBe(100); // 4 x 25: never more than the limit
    const tags = new Set(store.calls.map(([check]) => check!.tag));
    expect(tags.size).toBe(4);
    for (const [check] of store.calls) expect(check!.params.limit).toBe(25);
    const base = limiter.explain({}).rules[0]!.tag!;
    for (const tag of tags) expect(tag).toMatch(new RegExp(`^${base}-[0-3]$`));
  });

  it('keeps rollout on the key, not the shard', async () => {
    const { store, limiter } = limiterWith({ shards: 8, rollout: 0 });
    await allowedOf(limiter, 20);
    expect(new Set(store.calls.map(([check]) => check!.mode))).toEqual(new Set(['shadow']));
  });
});

describe('local leases', () => {
  it('takes K units per store call and spends them locally', async () => {
    const { store, limiter } = limiterWith({ lease: { batch: 10 } });
    expect(await allowedOf(limiter, 50)).toBe(50);
    expect(store.calls).toHaveLength(5);
    for (const [check] of store.calls) expect(check!.cost).toBe(10);
    const decision = await limiter.check({});
    expect(decision.remaining).toBe(100 - 51);
  });

  it('never lets a gateway spend more than the store granted; near the limit a batch that no longer fits is refused', async () => {
    const { limiter } = limiterWith({ lease: { batch: 30 } });
    // 3 batches of 30 fit in 100; the fourth does not, though 10 units remain.
    expect(await allowedOf(limiter, 120)).toBe(90);
  });

  it('bounds overshoot to K per gateway per window when several gateways share a store', async () => {
    const shared = new MemoryStore();
    const rules = compileRules({
      rules: [
        {
          name: 'everyone',
          global: true,
          key: [],
          limit: { requests: 100, per: '60s' },
          lease: { batch: 10 },
        },
      ],
    });
    let now = T0;
    const gateways = [1, 2, 3].map(() => createLimiter({ rules, store: shared, clock: () => now }));
    let allowed = 0;
    // Each gateway takes a batch late in one window and spends it early in the next.
    now = T0 - (T0 % 60_000) + 59_000;
    for (const gateway of gateways) if ((await gateway.check({})).allowed) allowed++;
    now += 2_000;
    for (let i = 0; i < 200; i++) if ((await gateways[i % 3]!.check({})).allowed) allowed++;
    // The new window's counter holds what was taken in it; units left from the old window add at most K each.
    expect(allowed).toBeLessThanOrEqual(100 + 3 * 10);
    expect(allowed).toBeGreaterThan(60);
  });

  it('gives units back to the pool when another rule denies the request', async () => {
    const { limiter } = limiterWith({ lease: { batch: 10 } }, [
      { name: 'per_key', key: ['k'], limit: { requests: 1, per: '60s' } },
    ]);
    expect((await limiter.check({ k: 'a' })).allowed).toBe(true); // takes a batch of 10, spends 1
    expect((await limiter.check({ k: 'a' })).allowed).toBe(false); // per_key denies: nothing spent
    let allowed = 0;
    for (let i = 0; i < 9; i++) if ((await limiter.check({ k: `b${i}` })).allowed) allowed++;
    expect(allowed).toBe(9);
  });

  it('lets a pool expire after one window', async () => {
    let now = T0;
    const { store, limiter } = limiterWith({ lease: { batch: 10 } }, [], () => now);
    await limiter.check({});
    now += 60_000;
    await limiter.check({});
    expect(store.calls).toHaveLength(2);
  });

  it('leaves rules without lease untouched', async () => {
    const { store, limiter } = limiterWith({});
    await allowedOf(limiter, 5);
    expect(store.calls).toHaveLength(5);
    for (const [check] of store.calls) expect(check!.cost).toBe(1);
  });
});

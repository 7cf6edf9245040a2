import { describe, expect, it } from 'vitest';
import { type ConcurrencyState, concurrency, releaseLease } from './concurrency.js';

const T = Date.UTC(2026, 10, 30, 8, 0);
const lease = (leaseId: string) => ({ limit: 2, windowMs: 30_000, burst: 2, leaseId });

describe('concurrency', () => {
  it('holds leases up to the limit; a release makes room at once', () => {
    let state: ConcurrencyState | undefined;
    state = concurrency.decide(state, T, lease('a'), 1).state;
    const b = concurrency.decide(state, T + 1000, lease('b'), 1);
    expect(b).toMatchObject({ allowed: true, remaining: 0, resetMs: 30_000, ttlMs: 30_000 });
    state = b.state;
    const c = concurrency.decide(state, T + 2000, lease('c'), 1);
    // Lease a expires at T + 30 s unless released sooner: an upper bound, exact if nobody releases.
    expect(c).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 28_000 });
    expect(c.state).toBe(state);
    state = releaseLease(state, 'a', T + 3000);
    expect(concurrency.decide(state, T + 3000, lease('c'), 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('expires a lease nobody released', () => {
    const state = concurrency.decide(undefined, T, lease('a'), 2).state;
    expect(concurrency.decide(state, T + 29_999, lease('b'), 1).allowed).toBe(false);
    expect(concurrency.decide(state, T + 30_000, lease('b'), 2).allowed).toBe(true);
  });

  it('renews a lease taken again under the same id', () => {
    const state = concurrency.decide(undefined, T, lease('a'), 1).state;
    const renewed = concurrency.decide(state, T + 10_000, lease('a'), 2);
    expect(renewed).toMatchObject({ allowed: true, remaining: 0 });
    expect(renewed.state.leases).toEqual([{ id: 'a', expiresAt: T + 40_000, cost: 2 }]);
  });

  it('releases idempotently and prunes expired leases', () => {
    let state = concurrency.decide(undefined, T, lease('a'), 1).state;
    state = concurrency.decide(state, T + 40_000, lease('b'), 1).state;
    expect(state.leases.map((l) => l.id)).toEqual(['b']);
    const once = releaseLease(state, 'b', T + 41_000);
    expect(releaseLease(once, 'b', T + 41_000)).toEqual(once);
    expect(releaseLease(undefined, 'x', T)).toEqual({ leases: [] });
    expect(concurrency.decide(undefined, T, lease('z'), 3).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../store/contract.js';
import type { AlgorithmName } from './index.js';
import { ALGORITHM_NAMES, decideByName, descriptorOf, releasedState } from './index.js';
import type { LimitParams, Outcome } from './limits.js';

const T = Date.UTC(2026, 10, 30, 9, 30); // on a whole minute
const PARAMS: LimitParams = { limit: 10, windowMs: 60_000, burst: 10 };
const REFUNDING = ALGORITHM_NAMES.filter((name) => descriptorOf(name).release === 'refund');

/** The state of a counter after `outcome`, committed only when allowed (as stores do). */
function after(state: unknown, outcome: Outcome<unknown>): unknown {
  return outcome.allowed ? outcome.state : state;
}

/** The count-by-outcome lease of a charge made at `at` (the store answered `resetMs`). */
function chargeLease(algorithm: AlgorithmName, cost: number, at: number, resetMs: number): Lease {
  return {
    rule: 'r',
    tag: 't',
    algorithm,
    id: '',
    scope: 'store',
    refund: { cost, params: PARAMS, at, resetMs, count: 'failed' },
  };
}

/** The state once the lease is given back at `now` (unchanged when the refund is dropped). */
function refunded(state: unknown, lease: Lease, now: number): unknown {
  return releasedState(state, lease, now)?.state ?? state;
}

/** What a request of `cost` at `now` is answered, as the fields a client sees. */
function answer(name: AlgorithmName, state: unknown, now: number, cost = 1) {
  const { allowed, remaining, retryAfterMs, resetMs } = decideByName(name, state, now, PARAMS, cost);
  return { allowed, remaining, retryAfterMs, resetMs };
}

describe('refunds of a charge (counting by outcome)', () => {
  it('every counting algorithm refunds; concurrency holds leases instead', () => {
    expect(REFUNDING).toEqual([
      'fixed_window',
      'first_request_window',
      'sliding_window',
      'sliding_log',
      'token_bucket',
      'gcra',
      'leaky_bucket',
      'quota',
    ]);
  });

  it.each(REFUNDING)(
    '%s: a refund soon after the charge leaves the counter as if it was never made',
    (name) => {
      const before = after(undefined, decideByName(name, undefined, T, PARAMS, 3));
      const charge = decideByName(name, before, T + 10, PARAMS, 2);
      expect(charge.allowed).toBe(true);
      const back = refunded(charge.state, chargeLease(name, 2, T + 10, charge.resetMs), T + 10);
      expect(answer(name, back, T + 10)).toEqual(answer(name, before, T + 10));
    },
  );

  it.each(REFUNDING)('%s: never below an empty counter, whatever the charge claims', (name) => {
    const charge = decideByName(name, undefined, T, PARAMS, 1);
    const back = refunded(charge.state, chargeLease(name, 9, T, charge.resetMs), T);
    expect(answer(name, back, T, 10)).toEqual(answer(name, undefined, T, 10));
  });

  it.each(REFUNDING)('%s: nothing to give back on a counter that is gone', (name) => {
    const lease = chargeLease(name, 1, T, 1000);
    expect(releasedState(undefined, lease, T + 1)).toBeUndefined();
  });

  it.each(['fixed_window', 'quota'] as const)(
    '%s: a refund for a window that has rolled over is dropped',
    (name) => {
      const charge = decideByName(name, undefined, T + 59_000, PARAMS, 4);
      const lease = chargeLease(name, 4, T + 59_000, charge.resetMs);
      // Still in the window: given back.
      expect(answer(name, refunded(charge.state, lease, T + 59_999), T + 59_999).remaining).toBe(9);
      // The next window: the old count no longer counts and nothing is taken off the new one.
      const next = after(charge.state, decideByName(name, charge.state, T + 60_000, PARAMS, 2));
      expect(releasedState(next, lease, T + 60_001)).toBeUndefined();
      expect(releasedState(charge.state, lease, T + 60_000)).toBeUndefined();
    },
  );

  it('sliding_window: once the charge weighs as the previous window it is kept', () => {
    const charge = decideByName('sliding_window', undefined, T + 59_000, PARAMS, 4);
    const lease = chargeLease('sliding_window', 4, T + 59_000, charge.resetMs);
    expect(answer('sliding_window', refunded(charge.state, lease, T + 59_500), T + 59_500).remaining).toBe(9);
    expect(releasedState(charge.state, lease, T + 60_000)).toBeUndefined();
    const rolled = after(charge.state, decideByName('sliding_window', charge.state, T + 60_001, PARAMS, 1));
    expect(releasedState(rolled, lease, T + 60_002)).toBeUndefined();
  });

  it('sliding_log: takes the charge off its own entry, and not once that entry has left the window', () => {
    let state = after(undefined, decideByName('sliding_log', undefined, T, PARAMS, 2));
    const charge = decideByName('sliding_log', state, T + 5, PARAMS, 3);
    state = charge.state;
    const lease = chargeLease('sliding_log', 3, T + 5, charge.resetMs);
    expect(refunded(state, lease, T + 100)).toEqual({ entries: [{ at: T, cost: 2 }] });
    // Two requests in the same ms share an entry: the refund takes one request's cost off it.
    const shared = after(state, decideByName('sliding_log', state, T + 5, PARAMS, 1));
    expect(refunded(shared, lease, T + 100)).toEqual({
      entries: [
        { at: T, cost: 2 },
        { at: T + 5, cost: 1 },
      ],
    });
    expect(releasedState(state, lease, T + 5 + PARAMS.windowMs)).toBeUndefined();
  });

  it.each(['token_bucket', 'gcra', 'leaky_bucket'] as const)(
    '%s: gives back only what has not drained (never room a later request took)',
    (name) => {
      const params = { limit: 10, windowMs: 1000, burst: 10 }; // one unit drains each 100 ms
      const lease = (cost: number, at: number, resetMs: number): Lease => ({
        ...chargeLease(name, cost, at, resetMs),
        refund: { cost, params, at, resetMs, count: 'failed' },
      });
      const charge = decideByName(name, undefined, T, params, 2); // drains by T + 200
      expect(charge.resetMs).toBe(200);
      // Half drained: one unit left to give back, then the bucket is as full as it would be anyway.
      const half = releasedState(charge.state, lease(2, T, 200), T + 100);
      expect(half?.ttlMs).toBe(0);
      // Another request took 5 units at T + 50: the refund at T + 100 gives one unit back, not two.
      const other = decideByName(name, charge.state, T + 50, params, 5);
      const back = refunded(other.state, lease(2, T, 200), T + 100);
      const plain = decideByName(name, back, T + 100, params, 1);
      const kept = decideByName(name, other.state, T + 100, params, 1);
      expect(plain.resetMs).toBe(kept.resetMs - 100);
      // Fully drained: nothing.
      expect(releasedState(other.state, lease(2, T, 200), T + 200)).toBeUndefined();
    },
  );

  it.each(REFUNDING)('%s: a refund never leaves more room than if the charge had never been made', (name) => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ gap: fc.integer({ min: 0, max: 20_000 }), cost: fc.integer({ min: 1, max: 2 }) }),
          {
            maxLength: 6,
          },
        ),
        fc.integer({ min: 0, max: 70_000 }),
        fc.integer({ min: 1, max: 3 }),
        (others, refundGap, cost) => {
          const charge = decideByName(name, undefined, T, PARAMS, cost);
          let withCharge = charge.state;
          // A first_request_window's window opens at the charge, refunded or not: compare with the same window
          // opened by a request that counted nothing.
          let without: unknown =
            name === 'first_request_window' ? decideByName(name, undefined, T, PARAMS, 0).state : undefined;
          let now = T;
          for (const step of others) {
            now += step.gap;
            const a = decideByName(name, withCharge, now, PARAMS, step.cost);
            const b = decideByName(name, without, now, PARAMS, step.cost);
            // Compare only histories where the other requests were let through alike.
            if (!a.allowed || !b.allowed) return;
            withCharge = a.state;
            without = b.state;
          }
          now += refundGap;
          const back = refunded(withCharge, chargeLease(name, cost, T, charge.resetMs), now);
          const room = (state: unknown) => decideByName(name, state, now, PARAMS, 0).remaining;
          expect(room(back)).toBeLessThanOrEqual(room(without));
          expect(room(back)).toBeGreaterThanOrEqual(room(withCharge));
        },
      ),
    );
  });
});

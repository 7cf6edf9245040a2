/**
 * A rule reloaded with another algorithm under the same name finds the old algorithm's state on its keys. For
 * every ordered pair of registered algorithms: the new one never throws; a state not of its shape is stale and
 * counts afresh (the answer with no state at all); a state of its own shape (the period counters, the TATs) is
 * read as its own and never lets more through than a fresh counter would. Lists and logs holding something
 * that is not a record are not states either.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../store/contract.js';
import { ALGORITHM_NAMES, type AlgorithmName, decideByName, descriptorOf, releasedState } from './index.js';
import type { LimitParams } from './limits.js';

const NOW = Date.UTC(2026, 10, 30, 9, 30);

/** The algorithms whose states share one shape: each reads the others' as its own. Every other pair differs. */
const SAME_SHAPE: readonly (readonly AlgorithmName[])[] = [
  ['fixed_window', 'first_request_window', 'quota'],
  ['gcra', 'leaky_bucket'],
];

const sameShape = (a: AlgorithmName, b: AlgorithmName) =>
  a === b || SAME_SHAPE.some((group) => group.includes(a) && group.includes(b));

const PAIRS = ALGORITHM_NAMES.flatMap((a) => ALGORITHM_NAMES.map((b) => [a, b] as const)).filter(
  ([a, b]) => a !== b,
);

const paramsArb = fc.record({
  limit: fc.integer({ min: 1, max: 8 }),
  windowMs: fc.constantFrom(1000, 60_000, 3_600_000),
  extra: fc.integer({ min: 0, max: 4 }),
});

const stepsArb = fc.array(
  fc.record({ gap: fc.integer({ min: 0, max: 5000 }), cost: fc.integer({ min: 1, max: 3 }) }),
  { minLength: 1, maxLength: 12 },
);

function paramsFor(name: AlgorithmName, p: { limit: number; windowMs: number; extra: number }): LimitParams {
  const bucket = name === 'token_bucket' || name === 'gcra' || name === 'leaky_bucket';
  return { limit: p.limit, windowMs: p.windowMs, burst: bucket ? p.limit + p.extra : p.limit };
}

/** The state `name` leaves after the steps (what a store keeps: only allowed outcomes are written). */
function stateAfter(
  name: AlgorithmName,
  params: LimitParams,
  steps: readonly { gap: number; cost: number }[],
): { state: unknown; at: number } {
  let state: unknown;
  let at = NOW;
  steps.forEach(({ gap, cost }, i) => {
    at += gap;
    const outcome = decideByName(name, state, at, params, cost, `lease${i}`);
    if (outcome.allowed) state = outcome.state;
  });
  return { state, at };
}

describe('a state written by another algorithm', () => {
  it('is its own shape only within the pinned groups', () => {
    const p = { limit: 5, windowMs: 60_000, extra: 2 };
    for (const [a, b] of PAIRS) {
      const { state } = stateAfter(a, paramsFor(a, p), [{ gap: 0, cost: 1 }]);
      expect({ a, b, reads: descriptorOf(b).isState(state) }).toEqual({ a, b, reads: sameShape(a, b) });
    }
  });

  it.each(PAIRS)(
    '%s then %s: never throws; another shape counts afresh, its own never admits more',
    (a, b) => {
      fc.assert(
        fc.property(
          paramsArb,
          stepsArb,
          fc.integer({ min: 0, max: 5000 }),
          fc.integer({ min: 1, max: 3 }),
          (p, steps, gap, cost) => {
            const { state, at } = stateAfter(a, paramsFor(a, p), steps);
            const now = at + gap;
            const params = paramsFor(b, p);
            const fresh = decideByName(b, undefined, now, params, cost, 'next');
            const reloaded = decideByName(b, state, now, params, cost, 'next');
            if (!sameShape(a, b)) {
              expect(reloaded).toEqual(fresh);
              return;
            }
            expect(descriptorOf(b).isState(reloaded.state)).toBe(true);
            expect(reloaded.remaining).toBeGreaterThanOrEqual(0);
            expect(reloaded.remaining).toBeLessThanOrEqual(params.burst);
            if (!reloaded.allowed) return;
            expect(fresh.allowed).toBe(true);
            expect(reloaded.remaining).toBeLessThanOrEqual(fresh.remaining);
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it.each(PAIRS.filter(([, b]) => descriptorOf(b).release !== 'none'))(
    '%s then a hold of %s given back: nothing to change unless the shape is its own',
    (a, b) => {
      const p = { limit: 5, windowMs: 60_000, extra: 2 };
      const { state } = stateAfter(a, paramsFor(a, p), [{ gap: 0, cost: 2 }]);
      const lease: Lease = {
        rule: 'r',
        tag: 't',
        algorithm: b,
        id: 'lease0',
        scope: 'store',
        ...(descriptorOf(b).release === 'refund'
          ? { refund: { cost: 2, at: NOW, params: paramsFor(b, p) } }
          : {}),
      };
      const released = releasedState(state, lease, NOW + 10);
      if (!sameShape(a, b)) expect(released).toBeUndefined();
      else if (released !== undefined) expect(descriptorOf(b).isState(released.state)).toBe(true);
    },
  );
});

describe('a log or lease list holding what is not a record', () => {
  const params = { limit: 3, windowMs: 60_000, burst: 3 };
  it.each([
    ['sliding_log', { entries: [null] }],
    ['sliding_log', { entries: [{ at: NOW, cost: 1 }, 7] }],
    ['concurrency', { leases: [null] }],
    ['concurrency', { leases: ['lease0'] }],
  ] as const)('%s %j is stale: counted afresh', (name, state) => {
    expect(descriptorOf(name).isState(state)).toBe(false);
    expect(decideByName(name, state, NOW, params, 1, 'next')).toEqual(
      decideByName(name, undefined, NOW, params, 1, 'next'),
    );
  });
});

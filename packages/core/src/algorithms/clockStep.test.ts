/**
 * A clock that steps back (an NTP correction, a restored VM, gateways whose clocks disagree), and states
 * from the future or from nowhere: every algorithm keeps its answers whole, non-negative and bounded,
 * never lets more through than the rule allows in real time, and never holds a client back longer than
 * the step plus the rule's longest wait.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALGORITHMS } from '../rules/schema.js';
import type { Lease } from '../store/contract.js';
import type { AlgorithmName } from './index.js';
import {
  decideByName,
  descriptorOf,
  type GcraState,
  gcra,
  releasedState,
  type TokenBucketState,
  tokenBucket,
} from './index.js';
import type { LimitParams, Outcome } from './limits.js';

const NOW = Date.UTC(2026, 10, 30, 9, 30);
const HOUR = 3_600_000;
const YEAR = 365 * 86_400_000;

const isBucket = (name: AlgorithmName) =>
  name === 'token_bucket' || name === 'gcra' || name === 'leaky_bucket';

/** Small windows, so that steps of a few windows are cheap to explore. */
const paramsArb = fc
  .record({
    limit: fc.integer({ min: 1, max: 20 }),
    windowMs: fc.oneof(fc.constantFrom(1000, 60_000), fc.integer({ min: 1, max: 5000 })),
    extra: fc.integer({ min: 0, max: 10 }),
  })
  .map(({ limit, windowMs, extra }) => ({ limit, windowMs, extra }));

function paramsFor(name: AlgorithmName, p: { limit: number; windowMs: number; extra: number }): LimitParams {
  return { limit: p.limit, windowMs: p.windowMs, burst: isBucket(name) ? p.limit + p.extra : p.limit };
}

/** Units a request can ever take at once. */
function capacity(name: AlgorithmName, p: LimitParams): number {
  return isBucket(name) ? p.burst : p.limit;
}

/** The longest wait (retry, reset, delay) the algorithm gives without any clock step. */
function longestWait(name: AlgorithmName, p: LimitParams): number {
  if (isBucket(name)) return Math.ceil((p.burst * p.windowMs) / p.limit);
  return name === 'sliding_window' ? 2 * p.windowMs : p.windowMs;
}

/**
 * The largest step back (from the latest clock reading) after which a state still counts in full: one
 * window, or the time to fill a bucket. Further back, a state is taken for stale.
 */
function longestStep(name: AlgorithmName, p: LimitParams): number {
  return isBucket(name) ? Math.floor((p.burst * p.windowMs) / p.limit) : p.windowMs;
}

/** The most the algorithm lets through in any span of windowMs of real time, clock steps or not. */
function realTimeBound(name: AlgorithmName, p: LimitParams): number {
  if (isBucket(name)) return p.burst + p.limit;
  if (name === 'sliding_log' || name === 'concurrency') return p.limit;
  return 2 * p.limit; // fixed_window, first_request_window, quota and sliding_window: up to twice around a window boundary
}

/** Every number of an outcome is a header value: whole, non-negative, and no longer than the longest wait. */
function expectSane(name: AlgorithmName, p: LimitParams, cost: number, o: Outcome<unknown>): void {
  const longest = longestWait(name, p);
  expect(Number.isInteger(o.remaining)).toBe(true);
  expect(o.remaining).toBeGreaterThanOrEqual(0);
  expect(o.remaining).toBeLessThanOrEqual(capacity(name, p));
  expect(Number.isInteger(o.resetMs)).toBe(true);
  expect(o.resetMs).toBeGreaterThanOrEqual(0);
  expect(o.resetMs).toBeLessThanOrEqual(longest);
  expect(Number.isFinite(o.ttlMs)).toBe(true);
  expect(o.ttlMs).toBeGreaterThanOrEqual(0);
  if (o.delayMs !== undefined) {
    expect(Number.isInteger(o.delayMs)).toBe(true);
    expect(o.delayMs).toBeGreaterThanOrEqual(0);
    expect(o.delayMs).toBeLessThanOrEqual(longest);
  }
  if (o.allowed) {
    expect(o.retryAfterMs).toBe(0);
  } else if (cost > capacity(name, p)) {
    expect(o.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  } else {
    expect(Number.isInteger(o.retryAfterMs)).toBe(true);
    expect(o.retryAfterMs).toBeGreaterThanOrEqual(1);
    expect(o.retryAfterMs).toBeLessThanOrEqual(longest);
  }
}

/** Steps of real time, each with a clock step (back, sometimes forward, by ms up to a year) and a cost. */
const anySteps = fc.array(
  fc.record({
    gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
    jump: fc.oneof(
      fc.constant(0),
      fc.integer({ min: -5000, max: 5000 }),
      fc.constantFrom(-HOUR, -YEAR, HOUR, -1),
      fc.integer({ min: -2 * HOUR, max: 0 }),
    ),
    cost: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 40 })),
  }),
  { minLength: 1, maxLength: 50 },
);

/** Steps whose clock only steps back, by `back` (a fraction of the allowed total step). */
const backSteps = fc.array(
  fc.record({
    gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })),
    back: fc.oneof(fc.constant(0), fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })),
    cost: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 25 })),
  }),
  { minLength: 1, maxLength: 80 },
);

describe.each(ALGORITHMS)('%s when the clock steps', (name) => {
  it('answers whole, non-negative numbers no longer than its longest wait, whatever the steps', () => {
    fc.assert(
      fc.property(paramsArb, anySteps, (base, sequence) => {
        const params = paramsFor(name, base);
        let state: unknown;
        let clock = NOW;
        sequence.forEach(({ gap, jump, cost }, i) => {
          clock += gap + jump;
          const outcome = decideByName(name, state, clock, params, cost, `lease-${i}`);
          expectSane(name, params, cost, outcome);
          if (outcome.allowed) state = outcome.state;
        });
      }),
      { numRuns: 300 },
    );
  });

  it('lets no more through in any window of real time than without steps back (up to its longest wait)', () => {
    fc.assert(
      fc.property(paramsArb, backSteps, (base, sequence) => {
        const params = paramsFor(name, base);
        const allowedBack = longestStep(name, params);
        const admitted: { real: number; cost: number }[] = [];
        let state: unknown;
        let real = NOW;
        let stepped = 0;
        sequence.forEach(({ gap, back, cost }, i) => {
          real += gap;
          stepped = Math.min(allowedBack, stepped + Math.floor(back * allowedBack));
          const outcome = decideByName(name, state, real - stepped, params, cost, `lease-${i}`);
          if (!outcome.allowed) return;
          state = outcome.state;
          if (cost > 0) admitted.push({ real, cost });
        });
        const bound = realTimeBound(name, params);
        for (const { real: end } of admitted) {
          let inSpan = 0;
          for (const a of admitted) if (a.real > end - params.windowMs && a.real <= end) inSpan += a.cost;
          expect(inSpan).toBeLessThanOrEqual(bound);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('lets a client that waits as told through within the step plus its longest wait', () => {
    fc.assert(
      fc.property(paramsArb, backSteps, fc.integer({ min: 1, max: 3 }), (base, sequence, retryCost) => {
        const params = paramsFor(name, base);
        const allowedBack = longestStep(name, params);
        let state: unknown;
        let real = NOW;
        let stepped = 0;
        let latest = Number.NEGATIVE_INFINITY;
        sequence.forEach(({ gap, back, cost }, i) => {
          real += gap;
          stepped = Math.min(allowedBack, stepped + Math.floor(back * allowedBack));
          const clock = real - stepped;
          latest = Math.max(latest, clock);
          const outcome = decideByName(name, state, clock, params, cost, `lease-${i}`);
          if (outcome.allowed) state = outcome.state;
        });
        // From the last clock reading on, a client retries after each Retry-After it is given.
        const start = real - stepped;
        const deadline = start + (latest - start) + longestWait(name, params);
        let at = start;
        for (;;) {
          const outcome = decideByName(name, state, at, params, retryCost, 'client');
          if (outcome.allowed || retryCost > capacity(name, params)) break;
          at += outcome.retryAfterMs;
          expect(at).toBeLessThanOrEqual(deadline);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('token_bucket and gcra when the clock steps', () => {
  it('still give identical decisions: a step back un-refills the bucket as it pushes the TAT ahead', () => {
    fc.assert(
      fc.property(paramsArb, anySteps, (base, sequence) => {
        const params = paramsFor('gcra', base);
        let bucket: TokenBucketState | undefined;
        let cell: GcraState | undefined;
        let clock = NOW;
        for (const { gap, jump, cost } of sequence) {
          clock += gap + jump;
          const a = tokenBucket.decide(bucket, clock, params, cost);
          const b = gcra.decide(cell, clock, params, cost);
          const pick = (o: Outcome<unknown>) => [o.allowed, o.remaining, o.retryAfterMs, o.resetMs, o.ttlMs];
          expect(pick(a)).toEqual(pick(b));
          if (a.allowed) bucket = a.state;
          if (b.allowed) cell = b.state;
        }
      }),
      { numRuns: 500 },
    );
  });
});

/** Any number a corrupt key could hold: near now, far off, fractional, negative, NaN, infinite. */
const someNumber = fc.oneof(
  fc.integer({ min: -3 * HOUR, max: 3 * HOUR }).map((d) => NOW + d),
  fc.double({ min: NOW - YEAR, max: NOW + YEAR }),
  fc.integer({ min: -50, max: 50 }),
  fc.double(),
);

/** A state of the algorithm's shape whose every number is any number, often within a few windows of now. */
function corruptState(name: AlgorithmName, size: number): fc.Arbitrary<unknown> {
  const anyNumber = fc.oneof(
    someNumber,
    fc.double({ min: NOW - 3 * size, max: NOW + 3 * size, noNaN: true }),
    fc.integer({ min: -3, max: 3 }).map((k) => Math.floor(NOW / size) * size + k * size),
  );
  switch (name) {
    case 'fixed_window':
    case 'first_request_window':
    case 'quota':
      return fc.record({ start: anyNumber, count: anyNumber });
    case 'sliding_window':
      return fc.record({
        window: fc.oneof(
          anyNumber.map((x) => x / size),
          anyNumber.map((x) => Math.floor(x / size)),
        ),
        prev: anyNumber,
        curr: anyNumber,
      });
    case 'sliding_log':
      return fc.record({
        entries: fc.array(fc.record({ at: anyNumber, cost: anyNumber }), { maxLength: 5 }),
      });
    case 'concurrency':
      return fc.record({
        leases: fc.array(
          fc.record({ id: fc.constantFrom('a', 'b', 'me'), expiresAt: anyNumber, cost: anyNumber }),
          {
            maxLength: 5,
          },
        ),
      });
    case 'token_bucket':
      return fc.record({ tokens: anyNumber, at: anyNumber });
    default:
      return fc.record({ tat: anyNumber, sub: anyNumber });
  }
}

describe.each(ALGORITHMS)('%s on a corrupt state', (name) => {
  it('answers whole, non-negative numbers no longer than its longest wait', () => {
    fc.assert(
      fc.property(
        paramsArb.chain((base) => fc.tuple(fc.constant(base), corruptState(name, base.windowMs))),
        fc.integer({ min: 0, max: 25 }),
        ([base, state], cost) => {
          const params = paramsFor(name, base);
          expectSane(name, params, cost, decideByName(name, state, NOW, params, cost, 'me'));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe.each(ALGORITHMS.filter((name) => descriptorOf(name).release === 'refund'))(
  '%s refunds on a corrupt state or a clock that stepped',
  (name) => {
    it('never throw, keep a finite TTL, and leave a counter that still answers sanely', () => {
      fc.assert(
        fc.property(
          paramsArb.chain((base) => fc.tuple(fc.constant(base), corruptState(name, base.windowMs))),
          fc.integer({ min: 0, max: 25 }),
          fc.integer({ min: -3 * HOUR, max: 3 * HOUR }),
          fc.integer({ min: 0, max: 3 * HOUR }),
          ([base, state], cost, chargedAgo, resetMs) => {
            const params = paramsFor(name, base);
            const refund = { cost, params, at: NOW - chargedAgo, resetMs, count: 'failed' as const };
            const lease: Lease = { rule: 'r', tag: 't', algorithm: name, id: '', scope: 'store', refund };
            const back = releasedState(state, lease, NOW);
            if (back !== undefined) expect(Number.isFinite(back.ttlMs) && (back.ttlMs ?? 0) >= 0).toBe(true);
            const after = back === undefined ? state : back.state;
            expectSane(name, params, 1, decideByName(name, after, NOW, params, 1, 'me'));
          },
        ),
        { numRuns: 500 },
      );
    });
  },
);

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALGORITHMS } from '../rules/schema.js';
import type { AlgorithmName } from './index.js';
import {
  decideByName,
  type GcraState,
  gcra,
  slidingLog,
  slidingWindow,
  type TokenBucketState,
  tokenBucket,
} from './index.js';
import type { CalendarPeriod, LimitParams, Outcome } from './limits.js';

const NOW = Date.UTC(2026, 10, 30, 9, 30); // 2026-11-30, a Monday

const bucketParams = fc
  .record({
    limit: fc.integer({ min: 1, max: 50 }),
    windowMs: fc.oneof(fc.constantFrom(1000, 60_000, 3_600_000), fc.integer({ min: 1, max: 100_000 })),
    extra: fc.integer({ min: 0, max: 40 }),
  })
  .map(({ limit, windowMs, extra }): LimitParams => ({ limit, windowMs, burst: limit + extra }));

/** Steps: a gap in ms (sometimes 0, sometimes long) and a cost (sometimes above any capacity). */
const steps = (maxGap: number) =>
  fc.array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: maxGap })),
      cost: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 120 })),
    }),
    { minLength: 1, maxLength: 60 },
  );

function paramsFor(name: AlgorithmName, base: LimitParams, period: CalendarPeriod | undefined): LimitParams {
  if (name === 'token_bucket' || name === 'gcra' || name === 'leaky_bucket') return base;
  if (name === 'quota' && period !== undefined)
    return { limit: base.limit, windowMs: 0, burst: base.limit, period };
  return { ...base, burst: base.limit };
}

describe('token_bucket and gcra', () => {
  it('give identical decisions for any limit, burst, cost and time sequence', () => {
    fc.assert(
      fc.property(bucketParams, steps(200_000), (params, sequence) => {
        let bucket: TokenBucketState | undefined;
        let cell: GcraState | undefined;
        let now = NOW;
        for (const { gap, cost } of sequence) {
          now += gap;
          const a = tokenBucket.decide(bucket, now, params, cost);
          const b = gcra.decide(cell, now, params, cost);
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

describe('sliding_log', () => {
  it('allows exactly what a brute-force count of the last windowMs allows', () => {
    fc.assert(
      fc.property(bucketParams, steps(5_000), (base, sequence) => {
        const params = { ...base, burst: base.limit };
        const allowed: { at: number; cost: number }[] = [];
        let state = slidingLog.decide(undefined, NOW, params, 0).state;
        let now = NOW;
        for (const { gap, cost } of sequence) {
          now += gap;
          const inWindow = allowed
            .filter((e) => now - e.at < params.windowMs)
            .reduce((s, e) => s + e.cost, 0);
          const expected = inWindow + cost <= params.limit;
          const outcome = slidingLog.decide(state, now, params, cost);
          expect(outcome.allowed).toBe(expected);
          expect(outcome.remaining).toBe(Math.max(0, params.limit - inWindow - (expected ? cost : 0)));
          if (outcome.allowed) {
            state = outcome.state;
            allowed.push({ at: now, cost });
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('sliding_window', () => {
  it('decides by the seed formula over per-window counts kept by a model', () => {
    fc.assert(
      fc.property(bucketParams, steps(90_000), (base, sequence) => {
        const params = { ...base, burst: base.limit };
        const counts = new Map<number, number>();
        let state = slidingWindow.decide(undefined, NOW, params, 0).state;
        let now = NOW;
        for (const { gap, cost } of sequence) {
          now += gap;
          const w = Math.floor(now / params.windowMs);
          const elapsed = now - w * params.windowMs;
          const estimate = (counts.get(w - 1) ?? 0) * (1 - elapsed / params.windowMs) + (counts.get(w) ?? 0);
          const outcome = slidingWindow.decide(state, now, params, cost);
          // Away from the boundary, floating point cannot flip the comparison.
          if (Math.abs(estimate + cost - params.limit) > 1e-6) {
            expect(outcome.allowed).toBe(estimate + cost <= params.limit);
          }
          if (outcome.allowed) {
            state = outcome.state;
            counts.set(w, (counts.get(w) ?? 0) + cost);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe.each(ALGORITHMS)('%s over random sequences', (name) => {
  it('waiting retryAfterMs gets through, 1 ms less does not; denials change nothing', () => {
    fc.assert(
      fc.property(
        bucketParams,
        steps(name === 'quota' ? 3 * 86_400_000 : 90_000),
        fc.constantFrom<CalendarPeriod | undefined>(undefined, 'day', 'week', 'month'),
        (base, sequence, period) => {
          const params = paramsFor(name, base, period);
          let state: unknown;
          let now = NOW;
          sequence.forEach(({ gap, cost }, i) => {
            now += gap;
            const before = structuredClone(state);
            const outcome = decideByName(name, state, now, params, cost, `lease-${i}`);
            expect(state).toEqual(before); // the input is never mutated
            expect(outcome.remaining).toBeGreaterThanOrEqual(0);
            expect(outcome.resetMs).toBeGreaterThanOrEqual(0);
            expect(outcome.ttlMs).toBeGreaterThanOrEqual(0);
            if (outcome.allowed) {
              expect(outcome.retryAfterMs).toBe(0);
              state = outcome.state;
              return;
            }
            if (state !== undefined) expect(outcome.state).toBe(state);
            const retry = outcome.retryAfterMs;
            if (retry === Number.POSITIVE_INFINITY) {
              expect(cost).toBeGreaterThan(
                name === 'token_bucket' || name === 'gcra' || name === 'leaky_bucket'
                  ? params.burst
                  : params.limit,
              );
              return;
            }
            expect(retry).toBeGreaterThanOrEqual(1);
            expect(decideByName(name, state, now + retry, params, cost, 'probe').allowed).toBe(true);
            expect(decideByName(name, state, now + retry - 1, params, cost, 'probe').allowed).toBe(false);
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

import type { LimitParams } from '@sluice/core/store';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { type SlidingLogState, slidingLog } from '../../../core/src/algorithms/index.js';
import { ExactWindow } from './exactWindow.js';

/**
 * The replay's queue must count exactly as core's sliding_log: for any sequence of requests (times in order,
 * costs, limits), "fits" agrees with sliding_log's decision on the same admitted history.
 */
test('ExactWindow judges every request as core sliding_log does', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.integer({ min: 10, max: 5000 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 4 })), {
        maxLength: 300,
      }),
      (limit, windowMs, steps) => {
        const params: LimitParams = { limit, windowMs, burst: limit };
        const exact = new ExactWindow(windowMs);
        let state: SlidingLogState | undefined;
        let now = 1_000_000;
        for (const [gap, cost] of steps) {
          now += gap;
          const outcome = slidingLog.decide(state, now, params, cost);
          const fits = cost <= limit && exact.used(now) + cost <= limit;
          expect(fits).toBe(outcome.allowed);
          if (outcome.allowed) {
            state = outcome.state;
            if (cost > 0) exact.add(now, cost);
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

/**
 * Refunds in Lua must give back exactly as core's pure functions: random sequences of charges and refunds (of
 * charges made any time before, some in windows long gone, some twice) give the same answers on RedisStore
 * and on MemoryStore, for every algorithm that refunds.
 */

import { MemoryStore } from '@sluice/core';
import {
  ALGORITHM_NAMES,
  type AlgorithmName,
  type CheckResult,
  descriptorOf,
  type Lease,
  type LimitParams,
  type Store,
} from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const T0 = Date.UTC(2026, 0, 31, 23, 59, 0);
const REFUNDING = ALGORITHM_NAMES.filter((name) => descriptorOf(name).release === 'refund');

type Step =
  | { readonly kind: 'charge'; readonly advance: number; readonly cost: number }
  | { readonly kind: 'refund'; readonly advance: number; readonly which: number };

function paramsArb(algorithm: AlgorithmName): fc.Arbitrary<LimitParams> {
  return fc
    .record({
      limit: fc.integer({ min: 1, max: 6 }),
      windowMs: fc.constantFrom(1000, 7000, 60_000),
      extra: fc.integer({ min: 0, max: 3 }),
      period: fc.constantFrom(undefined, 'day' as const),
    })
    .map(({ limit, windowMs, extra, period }) => {
      const bucket = algorithm === 'token_bucket' || algorithm === 'gcra' || algorithm === 'leaky_bucket';
      if (algorithm === 'quota' && period !== undefined) return { limit, windowMs: 0, burst: limit, period };
      return { limit, windowMs, burst: bucket ? limit + extra : limit };
    });
}

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('charge' as const),
    advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 70_000 })),
    cost: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({
    kind: fc.constant('refund' as const),
    advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 70_000 })),
    which: fc.nat(),
  }),
);

/** One store's run: its answers to the charges, and the leases of the charges it allowed. */
async function run(store: Store, algorithm: AlgorithmName, params: LimitParams, steps: readonly Step[]) {
  const counter = { rule: 'r', tag: 'refundEquivalence' };
  const answers: CheckResult[] = [];
  const charged: Lease[] = [];
  let now = T0;
  for (const step of steps) {
    now += step.advance;
    if (step.kind === 'refund') {
      const lease = charged[step.which % Math.max(1, charged.length)];
      if (lease !== undefined) await store.release([lease], now);
      continue;
    }
    const [answer] = await store.evaluate(
      [{ ...counter, algorithm, params, cost: step.cost, mode: 'enforce' }],
      now,
    );
    answers.push(answer!);
    if (answer!.allowed && step.cost > 0) {
      const refund = { cost: step.cost, params, at: now, resetMs: answer!.resetMs, count: 'failed' as const };
      charged.push({ ...counter, algorithm, id: '', scope: 'store', refund });
    }
  }
  await store.close();
  return answers;
}

describe('RedisStore refunds exactly as the pure algorithms (vs MemoryStore)', () => {
  it.each(REFUNDING)('%s: random charges and refunds', async (algorithm) => {
    await fc.assert(
      fc.asyncProperty(
        paramsArb(algorithm),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        async (params, steps) => {
          const expected = await run(new MemoryStore(), algorithm, params, steps);
          const redisStore = new RedisStore({
            client: redis.client,
            prefix: randomPrefix('req'),
            timeoutMs: 5000,
            breaker: false,
          });
          expect(await run(redisStore, algorithm, params, steps)).toEqual(expected);
        },
      ),
      { numRuns: Number(process.env.SLUICE_FC_RUNS ?? 40) },
    );
  });
});

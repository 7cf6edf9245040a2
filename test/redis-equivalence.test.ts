/**
 * RedisStore's Lua must decide exactly as core's pure functions: random request sequences (mixed rules,
 * costs, modes, leases, releases, time steps) give the same results on RedisStore and on MemoryStore.
 */

import { MemoryStore } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName, type Check, type LimitParams } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, startRedis } from './support/redis.js';

const T0 = Date.UTC(2026, 0, 30, 23, 59, 0);
const DAY = 86_400_000;
const TAGS = ['tagA', 'tagB'];
const LEASES = ['l1', 'l2', 'l3', 'l4'];

let server: RedisServer;
let client: Redis;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({ host: server.host, port: server.port });
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});

interface RuleSpec {
  name: string;
  algorithm: AlgorithmName;
  params: LimitParams;
  mode: 'enforce' | 'shadow';
}

const usesBurst = (a: AlgorithmName) => a === 'token_bucket' || a === 'gcra' || a === 'leaky_bucket';

function ruleArb(algorithm: fc.Arbitrary<AlgorithmName>, name: string): fc.Arbitrary<RuleSpec> {
  return fc
    .record({
      algorithm,
      limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(0), fc.integer({ min: 7, max: 1000 })),
      windowMs: fc.constantFrom(1000, 7000, 60_000, 3_600_000),
      extraBurst: fc.integer({ min: 0, max: 4 }),
      period: fc.constantFrom(undefined, 'day', 'week', 'month'),
      mode: fc.constantFrom('enforce', 'enforce', 'shadow'),
    })
    .map(({ algorithm, limit, windowMs, extraBurst, period, mode }) => {
      const calendar = algorithm === 'quota' && period !== undefined;
      const params: LimitParams = {
        limit,
        windowMs: calendar ? 0 : windowMs,
        burst: usesBurst(algorithm) ? limit + extraBurst : limit,
        ...(calendar ? { period } : {}),
      };
      return { name, algorithm, params, mode } as RuleSpec;
    });
}

type Step =
  | { kind: 'check'; advance: number; picks: { rule: number; tag: number; lease: number }[]; cost: number }
  | { kind: 'release'; advance: number; rule: number; tag: number; lease: number };

const advanceArb = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 50 }),
  fc.integer({ min: 1, max: 70_000 }),
  fc.integer({ min: 1, max: 40 * DAY }),
  fc.double({ min: 0, max: 10, noNaN: true }),
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('check' as const),
      advance: advanceArb,
      picks: fc.array(
        fc.record({
          rule: fc.integer({ min: 0, max: 2 }),
          tag: fc.integer({ min: 0, max: 1 }),
          lease: fc.integer({ min: 0, max: 3 }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 8 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('release' as const),
      advance: advanceArb,
      rule: fc.integer({ min: 0, max: 2 }),
      tag: fc.integer({ min: 0, max: 1 }),
      lease: fc.integer({ min: 0, max: 3 }),
    }),
  },
);

async function compare(rules: RuleSpec[], steps: Step[]): Promise<void> {
  const memory = new MemoryStore();
  const redis = new RedisStore({ client, prefix: randomPrefix('eq'), timeoutMs: 5000, breaker: false });
  let now = T0;
  for (const [index, step] of steps.entries()) {
    now += step.advance;
    if (step.kind === 'release') {
      // Leases exist only for concurrency rules.
      if (rules[step.rule]!.algorithm !== 'concurrency') continue;
      const lease = {
        rule: rules[step.rule]!.name,
        tag: TAGS[step.tag]!,
        algorithm: 'concurrency' as const,
        id: LEASES[step.lease]!,
        scope: 'store' as const,
      };
      await memory.release([lease], now);
      await redis.release([lease], now);
      continue;
    }
    const seen = new Set<string>();
    const checks: Check[] = [];
    for (const pick of step.picks) {
      const rule = rules[pick.rule]!;
      const id = `${rule.name}/${pick.tag}`;
      if (seen.has(id)) continue; // the engine never sends one counter twice in a call
      seen.add(id);
      checks.push({
        rule: rule.name,
        tag: TAGS[pick.tag]!,
        algorithm: rule.algorithm,
        params: rule.params,
        cost: step.cost,
        mode: rule.mode,
        ...(rule.algorithm === 'concurrency' ? { leaseId: LEASES[pick.lease]! } : {}),
      });
    }
    const expected = await memory.evaluate(checks, now);
    const actual = await redis.evaluate(checks, now);
    expect(actual, `step ${index} at T0+${now - T0}: ${JSON.stringify(checks)}`).toEqual(expected);
  }
}

describe('RedisStore decides exactly as the pure algorithms (vs MemoryStore)', () => {
  for (const algorithm of ALGORITHM_NAMES) {
    it(`${algorithm}: random sequences`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(
            ruleArb(fc.constant(algorithm), 'r0'),
            ruleArb(fc.constant(algorithm), 'r1'),
            ruleArb(fc.constantFrom(...ALGORITHM_NAMES), 'r2'),
          ),
          fc.array(stepArb, { minLength: 1, maxLength: 30 }),
          async (rules, steps) => compare(rules, steps),
        ),
        { numRuns: Number(process.env.SLUICE_FC_RUNS ?? 60) },
      );
    });
  }
});

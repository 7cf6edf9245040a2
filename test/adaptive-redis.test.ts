/**
 * Adaptive factors shared through one redis-server: the Lua step agrees with core's, one small hashed key per
 * rule with a TTL, a few reports a second, and two gateways tightening together.
 */

import { type AdaptivePolicy, compileRules, createLimiter, type Limiter, type RuleSpec } from '@sluice/core';
import type { FactorReport } from '@sluice/core/store';
import { FACTOR_TTL_MS, factorKey, RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { ADAPTIVE_DEFAULTS } from '../packages/core/src/rules/adaptivePolicy.js';
import { MemoryFactors } from '../packages/core/src/store/memoryFactors.js';
import { randomPrefix, ready, redisSuite, scanKeys } from './support/redis.js';

const redis = redisSuite();

const policy: AdaptivePolicy = {
  ...ADAPTIVE_DEFAULTS,
  errorRate: 0.1,
  latency: { percentile: 99, maxMs: 300 },
  minSamples: 10,
};

const payments: RuleSpec = {
  name: 'payments',
  global: true,
  algorithm: 'fixed_window',
  limit: { requests: 100, per: '1s' },
  adaptive: { error_rate: '10%', min_samples: 10 },
};

function storeOn(client: Redis, prefix: string): RedisStore {
  return new RedisStore({ client, prefix, timeoutMs: 5000, breaker: false });
}

/** A gateway: its own client and store on the shared server, and the test's clock. */
async function gateway(prefix: string, clock: () => number): Promise<{ limiter: Limiter; client: Redis }> {
  const client = new Redis({ host: redis.server.host, port: redis.server.port });
  await ready(client);
  const limiter = createLimiter({
    rules: compileRules({ domain: 'api', rules: [payments] }),
    store: storeOn(client, prefix),
    clock,
  });
  return { limiter, client };
}

/** Runs `test` with two gateways on one prefix and a fake clock starting at `start`; closes them after. */
async function withGateways(
  start: number,
  test: (a: Limiter, b: Limiter, clock: { now: number }, prefix: string) => Promise<void>,
): Promise<void> {
  const prefix = randomPrefix();
  const clock = { now: start };
  const gateways = [await gateway(prefix, () => clock.now), await gateway(prefix, () => clock.now)];
  try {
    await test(gateways[0]!.limiter, gateways[1]!.limiter, clock, prefix);
  } finally {
    await Promise.all(gateways.map((g) => g.limiter.close()));
    for (const g of gateways) g.client.disconnect();
  }
}

/** One second of `count` requests through a gateway, answering the allowed ones with `status`. */
async function second(
  limiter: Limiter,
  clock: { now: number },
  count: number,
  status: (i: number) => number,
): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < count; i++) {
    const decision = await limiter.check({});
    if (decision.allowed) {
      allowed++;
      limiter.observe(decision, status(i), 20);
    }
    clock.now += 1000 / count;
  }
  return allowed;
}

describe('RedisStore.adaptFactor', () => {
  it('takes the same steps as core (MemoryFactors) for the same reports', async () => {
    const store = storeOn(redis.client, randomPrefix());
    const memory = new MemoryFactors();
    const steps: [FactorReport, number][] = [];
    let now = 1_000_000;
    for (let i = 0; i < 40; i++) {
      const requests = (i * 37) % 60;
      const report: FactorReport = {
        id: 'api/payments',
        policy,
        requests,
        errors: i < 15 ? Math.floor(requests * 0.3) : 0,
        slow: i >= 25 && i < 30 ? Math.ceil(requests * 0.05) : 0,
        ...(i === 33 ? { pin: 0.1 } : {}),
      };
      now += 300 + ((i * 113) % 500);
      steps.push([report, now]);
    }
    const fromRedis: number[] = [];
    const fromMemory: number[] = [];
    for (const [report, at] of steps) {
      fromRedis.push(await store.adaptFactor(report, at));
      fromMemory.push(memory.adaptFactor(report, at));
    }
    expect(fromRedis).toEqual(fromMemory);
    expect(new Set(fromMemory).size).toBeGreaterThan(5);
  });

  it('keeps one small key per rule, its name hashed, with a TTL', async () => {
    const prefix = randomPrefix();
    const store = storeOn(redis.client, prefix);
    await store.adaptFactor({ id: 'api/payments', policy, requests: 3, errors: 1, slow: 0 }, 1000);
    await store.adaptFactor({ id: 'api/payments', policy, requests: 3, errors: 1, slow: 0 }, 1100);
    const keys = await scanKeys(redis.admin, prefix);
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('payments');
    const ttl = await redis.admin.pttl(keys[0] as string);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(FACTOR_TTL_MS);
    expect(await redis.admin.hget(keys[0] as string, 'n')).toBe('6');
  });
});

describe('two gateways sharing one redis-server', () => {
  it('both tighten while one sees the backend fail 30%, and both recover once it heals', () =>
    withGateways(5_000_000, async (a, b, clock) => {
      for (let s = 0; s < 4; s++) await second(a, clock, 100, (i) => (i % 10 < 3 ? 503 : 200));
      // b saw no failure itself; its first report brings the fleet's factor.
      await second(b, clock, 10, () => 200);
      expect(b.factor('payments')).toBeLessThanOrEqual(0.25);
      for (let s = 0; s < 12; s++) await second(a, clock, 50, () => 200);
      await second(b, clock, 10, () => 200);
      expect(b.factor('payments')).toBe(1);
    }));

  it('follow one gateway whose circuit breaker opens', () =>
    withGateways(9_000_000, async (a, b, clock, prefix) => {
      await second(b, clock, 10, () => 200);
      a.setBreaker('payments', 'open');
      // The pin is written at once; b reads it with its next report, within the interval the pin started.
      const key = factorKey(prefix, 'api/payments');
      await vi.waitFor(async () => expect(Number(await redis.admin.hget(key, 'f'))).toBe(0.1));
      clock.now += 300;
      await b.check({});
      expect(b.factor('payments')).toBe(0.1);
      expect((await b.check({})).limit).toBe(10);
    }));

  it('report a rule a few times a second, never per request', async () => {
    const store = storeOn(redis.client, randomPrefix());
    const reports = vi.spyOn(store, 'adaptFactor');
    const clock = { now: 1_000 };
    const limiter = createLimiter({
      rules: compileRules({ domain: 'api', rules: [payments] }),
      store,
      clock: () => clock.now,
    });
    await second(limiter, clock, 200, () => 200);
    expect(reports.mock.calls.length).toBeGreaterThan(0);
    expect(reports.mock.calls.length).toBeLessThanOrEqual(5);
  });
});

/** RedisStore when Redis fails: outage and restart, a slow Redis, the breaker, the fallback, bounded queues. */

import { compileRules, createLimiter, type Decision, parseRules, StoreError } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';

/** The client settings the README recommends for a limiter. */
const RECOMMENDED: RedisOptions = {
  ...recommendedRedisOptions,
  retryStrategy: () => 50, // tests reconnect fast; the README suggests a capped backoff
};

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});
afterEach(() => {
  expect(unhandled).toEqual([]); // nothing escapes, in any test
});

const RULES = compileRules(
  parseRules(`
domain: failure
rules:
  - name: open_rule
    match: {}
    key: [user]
    limit: {requests: 1000, per: 60s}
    algorithm: fixed_window
  - name: critical_rule
    match: {route: /pay}
    key: [user]
    limit: {requests: 1000, per: 60s}
    algorithm: fixed_window
    on_store_error: deny
`),
);

function client(server: RedisServer, options: RedisOptions = RECOMMENDED): Redis {
  const redis = new Redis({ host: server.host, port: server.port, ...options });
  redis.on('error', () => {}); // connection errors are expected here; ioredis would log them
  return redis;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function check(limit = 10): Check {
  return {
    rule: 'r',
    tag: 'failureTagAAAAAAAAAAAA',
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

describe('an outage and a restart on the same port', () => {
  it('keeps deciding by on_store_error while Redis is down, then uses Redis again', async () => {
    let server = await startRedis();
    const redis = client(server);
    await ready(redis);
    const prefix = randomPrefix();
    const store = new RedisStore({
      client: redis,
      prefix,
      timeoutMs: 100,
      breaker: { failures: 3, cooldownMs: 200 },
    });
    const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000 });
    const request = { user: 'u1', route: '/pay' };
    const timed = async () => {
      const started = performance.now();
      const decision = await limiter.check(request);
      return { decision, ms: performance.now() - started };
    };

    const healthy = await Promise.all(Array.from({ length: 20 }, timed));
    expect(healthy.every(({ decision }) => decision.allowed && !decision.failedOpen)).toBe(true);

    // Kill Redis while requests are in flight.
    const inFlight = Array.from({ length: 50 }, timed);
    await server.stop();
    const outage = [...(await Promise.all(inFlight))];
    for (let i = 0; i < 100; i++) outage.push(await timed());
    const failed = outage.filter(({ decision }) => decision.results.some((r) => r.failed));
    expect(failed.length).toBeGreaterThanOrEqual(100);
    for (const { decision, ms } of failed) {
      const byRule = Object.fromEntries(decision.results.map((r) => [r.rule, r]));
      expect(byRule.open_rule!.allowed).toBe(true); // fails open
      expect(byRule.critical_rule!.allowed).toBe(false); // fails closed
      expect(['store_error', 'timeout', 'breaker']).toContain(decision.reason);
      expect(ms).toBeLessThan(2000); // bounded by the store's own timeout, not the engine's 10 s backstop
    }
    expect(failed.some(({ decision }) => decision.reason === 'breaker')).toBe(true);
    expect(store.pending).toBeLessThanOrEqual(50);

    server = await startRedis({ port: server.port });
    let back: Decision | undefined;
    for (let i = 0; i < 200 && back === undefined; i++) {
      const { decision } = await timed();
      if (!decision.results.some((r) => r.failed)) back = decision;
      else await sleep(25);
    }
    expect(back?.allowed).toBe(true);
    const keys = await scanKeys(redis, prefix);
    expect(keys).toHaveLength(2); // counting in the new server (it started empty)
    expect(await redis.get(keys[0]!)).toMatch(/ 1$/);

    await limiter.close();
    redis.disconnect();
    await server.stop();
  });

  it('bounds what piles up with ioredis defaults (offline queue on): calls fail fast while reconnecting, and drain once Redis is back', async () => {
    let server = await startRedis();
    const redis = client(server, { retryStrategy: () => 50 });
    await ready(redis);
    const store = new RedisStore({ client: redis, timeoutMs: 50, breaker: false, maxPending: 20 });
    await store.evaluate([check()], Date.now());
    await server.stop();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 500 }, () => store.evaluate([check()], Date.now())),
    );
    expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof StoreError)).toBe(true);
    expect(store.pending).toBeLessThanOrEqual(20);
    // ioredis keeps what it had sent on the dead connection and settles it after reconnecting: nothing stays.
    server = await startRedis({ port: server.port });
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 25 });
    await vi.waitFor(() => store.evaluate([check()], Date.now()), { timeout: 5000, interval: 25 });
    redis.disconnect();
    await server.stop();
  });
});

describe('a slow or failing Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = client(server);
    admin = client(server);
    await Promise.all([ready(redis), ready(admin)]);
  });
  afterAll(async () => {
    redis.disconnect();
    admin.disconnect();
    await server.stop();
  });

  /** Blocks the server for `seconds` (DEBUG SLEEP); resolves when it is responsive again. */
  function stall(seconds: number): Promise<unknown> {
    return admin.debug('SLEEP', seconds);
  }

  it('DEBUG SLEEP hits the timeout: the call fails with ERR_SLUICE_STORE_TIMEOUT and the engine says so', async () => {
    const store = new RedisStore({ client: redis, prefix: randomPrefix(), timeoutMs: 50, breaker: false });
    const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000 });
    await limiter.check({ user: 'u' });
    const sleeping = stall(0.6);
    await sleep(50);
    await expect(store.evaluate([check()], Date.now())).rejects.toMatchObject({
      code: 'ERR_SLUICE_STORE_TIMEOUT',
    });
    const decision = await limiter.check({ user: 'u' });
    expect(decision).toMatchObject({ allowed: true, failedOpen: true, reason: 'timeout' });
    await sleeping;
    expect((await limiter.check({ user: 'u' })).failedOpen).toBe(false);
  });

  it('the breaker opens after repeated failures, skips Redis during the cool-down, then probes and closes', async () => {
    const store = new RedisStore({
      client: redis,
      prefix: randomPrefix(),
      timeoutMs: 30,
      breaker: { failures: 2, cooldownMs: 1000 },
    });
    const t = 1_000_000;
    const sleeping = stall(0.5);
    await sleep(50);
    for (const now of [t, t + 1]) {
      await expect(store.evaluate([check()], now)).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
    }
    const pendingWhenOpened = store.pending;
    await expect(store.evaluate([check()], t + 500)).rejects.toMatchObject({
      code: 'ERR_SLUICE_BREAKER_OPEN',
    });
    expect(store.pending).toBe(pendingWhenOpened); // refused without sending anything
    await sleeping;

    // Cool-down over: one probe goes through; a second caller meanwhile is still refused.
    const probe = store.evaluate([check()], t + 1001);
    await expect(store.evaluate([check()], t + 1001)).rejects.toMatchObject({
      code: 'ERR_SLUICE_BREAKER_OPEN',
    });
    expect((await probe)[0]!.allowed).toBe(true);
    expect((await store.evaluate([check()], t + 1002))[0]!.allowed).toBe(true);
  });

  it('a failed probe reopens the breaker for another cool-down', async () => {
    const store = new RedisStore({
      client: redis,
      prefix: randomPrefix(),
      timeoutMs: 30,
      breaker: { failures: 1, cooldownMs: 100 },
    });
    const sleeping = stall(0.5);
    await sleep(50);
    await expect(store.evaluate([check()], 0)).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
    await expect(store.evaluate([check()], 100)).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
    await expect(store.evaluate([check()], 150)).rejects.toMatchObject({ code: 'ERR_SLUICE_BREAKER_OPEN' });
    await sleeping;
    expect((await store.evaluate([check()], 200))[0]!.allowed).toBe(true);
  });

  it('the fallback answers while Redis fails, each limit divided by the gateway count, marked degraded', async () => {
    const store = new RedisStore({
      client: redis,
      prefix: randomPrefix(),
      timeoutMs: 30,
      breaker: { failures: 1, cooldownMs: 60_000 },
      fallback: { gateways: 4 },
    });
    const sleeping = stall(0.5);
    await sleep(50);
    const t = 1_000_000;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await store.evaluate([check(8)], t))[0]!);
    expect(answers.map((a) => [a.allowed, a.limit, a.remaining, a.degraded])).toEqual([
      [true, 2, 1, 'timeout'],
      [true, 2, 0, 'breaker_open'],
      [false, 2, 0, 'breaker_open'],
      [false, 2, 0, 'breaker_open'],
    ]);
    const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000, clock: () => t + 1 });
    const decision = await limiter.check({ user: 'u', route: '/pay' });
    expect(decision.allowed).toBe(true); // coarse limits, not on_store_error: the critical rule still counts
    expect(decision.reason).toBe('breaker');
    await sleeping;
  });

  it('a fallback store of your own is used as given', async () => {
    const calls: number[] = [];
    const own = {
      evaluate: async (checks: readonly Check[]) => {
        calls.push(checks[0]!.params.limit);
        return checks.map(() => ({ allowed: true, limit: 1, remaining: 0, resetMs: 0, retryAfterMs: 0 }));
      },
      release: async () => {},
      close: async () => {},
    };
    const store = new RedisStore({ client: redis, timeoutMs: 30, breaker: false, fallback: own });
    const sleeping = stall(0.5);
    await sleep(50);
    const [answer] = await store.evaluate([check(8)], 0);
    expect(answer).toMatchObject({ allowed: true, degraded: 'timeout' });
    expect(calls).toEqual([8]);
    await sleeping;
  });

  it('a closed store refuses calls and leaves the client open', async () => {
    const store = new RedisStore({ client: redis, timeoutMs: 1000 });
    await store.close();
    await expect(store.evaluate([check()], 0)).rejects.toBeInstanceOf(StoreError);
    expect(await redis.ping()).toBe('PONG');
  });
});

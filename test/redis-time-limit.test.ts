/**
 * RedisStore's default time limit under a busy Redis and under a hung one, on a real redis-server: a Redis
 * that keeps answering, slowly (blocked by DEBUG SLEEP before each call), is waited for and no request fails
 * open, under traffic too (each call answered 150 ms late, issue 40's target); a Redis that stops answering (SIGSTOP) holds
 * calls only until nothing has answered for the stall time (DEFAULT_STALL_MS), then calls fail within the short
 * limit until it answers again.
 */

import { type Check, DEFAULT_STALL_CAP_MS, DEFAULT_STALL_MS } from '@sluice/core/store';
import {
  DEFAULT_MAX_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  RedisStore,
  recommendedRedisOptions,
} from '@sluice/redis';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { randomPrefix, redisSuite } from './support/redis.js';
import { startTcpProxy } from './support/tcp-proxy.js';

const redis = redisSuite();

const check: Check = {
  rule: 'busy',
  tag: 'busyTagAAAAAAAAAAAAAAAA',
  algorithm: 'fixed_window',
  params: { limit: 1000, windowMs: 60_000, burst: 1000 },
  cost: 1,
  mode: 'enforce',
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One call while Redis is blocked for `ms` by another connection: 'ok', or the failure's code. */
async function callWhileBusy(store: RedisStore, ms: number): Promise<string> {
  const busy = redis.admin.debug('SLEEP', ms / 1000);
  await pause(2); // the DEBUG SLEEP reaches the server first
  const outcome = await store.evaluate([check], Date.now()).then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? 'error',
  );
  await busy;
  // Until Redis has answered this call (late, when it timed out): that answer is what raises the limit.
  await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 1 });
  return outcome;
}

describe('RedisStore default time limit', () => {
  it('a Redis answering in 5x the short limit: every call waits for it, none fails open', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now()); // the script is loaded
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i += 1) outcomes.push(await callWhileBusy(store, 5 * DEFAULT_TIMEOUT_MS));
    expect(outcomes).toEqual(Array(8).fill('ok'));
    expect(store.health().failingOpenSince).toBeUndefined();
    await store.close();
  });

  it('a fixed limit (maxTimeoutMs = timeoutMs) fails open on every such call', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      maxTimeoutMs: DEFAULT_TIMEOUT_MS,
      breaker: false,
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now());
    const outcomes: string[] = [];
    // Redis held 10 short limits: a loaded machine's late timer still fires before the answer comes.
    for (let i = 0; i < 4; i += 1) outcomes.push(await callWhileBusy(store, 10 * DEFAULT_TIMEOUT_MS));
    expect(outcomes).toEqual(Array(4).fill('ERR_SLUICE_STORE_TIMEOUT'));
    await store.close();
  });

  it('timeoutMs given alone is a fixed limit', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      timeoutMs: 30,
      breaker: false,
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now());
    expect(await callWhileBusy(store, 100)).toBe('ERR_SLUICE_STORE_TIMEOUT');
    await store.close();
  });

  it('a hung Redis (SIGSTOP): the first call waits for a stall, not the ceiling; the next ones the short limit', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      breaker: false,
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now());
    process.kill(redis.server.pid, 'SIGSTOP');
    try {
      let started = performance.now();
      await expect(store.evaluate([check], Date.now())).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
      const first = performance.now() - started;
      expect(first).toBeGreaterThanOrEqual(DEFAULT_STALL_MS - 5);
      expect(first).toBeLessThan(DEFAULT_MAX_TIMEOUT_MS / 2);
      started = performance.now();
      await expect(store.evaluate([check], Date.now())).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
      expect(performance.now() - started).toBeLessThan(DEFAULT_STALL_MS);
    } finally {
      process.kill(redis.server.pid, 'SIGCONT');
    }
    // The late answers show Redis alive: a call waits again, and is answered.
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 5 });
    expect(await callWhileBusy(store, 5 * DEFAULT_TIMEOUT_MS)).toBe('ok');
    await store.close();
  });
});

/** Traffic from `workers` loops, one check after another each, until `stop()`; each check's time and outcome. */
function traffic(store: RedisStore, workers: number) {
  const outcomes: { at: number; ms: number; outcome: string }[] = [];
  let running = true;
  const t0 = performance.now();
  const loops = Array.from({ length: workers }, async () => {
    while (running) {
      const started = performance.now();
      const outcome = await store.evaluate([check], Date.now()).then(
        () => 'ok',
        (error: { code?: string }) => error.code ?? 'error',
      );
      outcomes.push({ at: started - t0, ms: performance.now() - started, outcome });
      await pause(2);
    }
  });
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

describe('busy or hung, told by progress, under traffic', () => {
  it('Redis stopped (SIGSTOP) mid-traffic: no check waits much past the stall time', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now());
    const run = traffic(store, 20);
    await pause(300);
    process.kill(redis.server.pid, 'SIGSTOP');
    try {
      await pause(1500);
    } finally {
      process.kill(redis.server.pid, 'SIGCONT');
    }
    await pause(1500);
    await run.stop();
    const slowest = Math.max(...run.outcomes.map((o) => o.ms));
    // Target 300 ms (bench/outage.ts measures it); room here for a shared machine.
    expect(slowest).toBeLessThan(600);
    expect(run.outcomes.some((o) => o.outcome === 'ERR_SLUICE_STORE_TIMEOUT')).toBe(true);
    expect(run.outcomes.filter((o) => o.at > 2600).every((o) => o.outcome === 'ok')).toBe(true);
    await store.close();
  });

  // Retried: on a loaded machine a late timer can still open a gap past the stall time (1 run in 19 at load 5-10).
  it('Redis answering each call 150 ms late: waited for, nothing fails open', { retry: 2 }, async (ctx) => {
    // Each call answered 150 ms late (75 ms held each way), one call out at a time (coalescing holds the rest):
    // the store hears an answer about every 150 ms, as from a saturated Redis. (Slowing Redis itself with DEBUG
    // SLEEP from a connection of this process is no steady pace: a loaded process sometimes sends its call
    // after the next sleep began, and that call waits two sleeps with no answer to anyone.)
    const proxy = await startTcpProxy(redis.server.port);
    const client = new Redis({ host: proxy.host, port: proxy.port, ...recommendedRedisOptions });
    const store = new RedisStore({ client, prefix: randomPrefix(), logger: { warn: () => {} } });
    try {
      await store.evaluate([check], Date.now());
      proxy.delay(75);
      // How late this process's timers ran (the delays a loaded machine adds to each gap between answers), in
      // the first 300 ms (before the store has answered at its new pace) and after.
      const began = performance.now();
      const late = { first: 0, later: 0 };
      let expected = began + 10;
      const lateness = setInterval(() => {
        const now = performance.now();
        const part = now - began < 300 ? 'first' : 'later';
        late[part] = Math.max(late[part], now - expected);
        expected = now + 10;
      }, 10);
      const run = traffic(store, 20);
      await pause(2000);
      await run.stop();
      clearInterval(lateness);
      proxy.delay(0);
      // A gap of 150 ms plus the machine's delays must stay under the stall time (200 ms) until the store has
      // answered at its new pace, and under the cap its pace raises that to (280 ms) after. A machine that held
      // this process's timers longer makes a busy store look hung: the promise is not tested then.
      const shown = `timers late up to ${Math.round(late.first)} ms, then ${Math.round(late.later)} ms`;
      if (late.first >= DEFAULT_STALL_MS - 160 || late.later >= DEFAULT_STALL_CAP_MS - 160) ctx.skip(shown);
      const failed = run.outcomes.filter((o) => o.outcome !== 'ok');
      expect(failed, `${shown}; first failed: ${JSON.stringify(failed.slice(0, 3))}`).toEqual([]);
      expect(Math.max(...run.outcomes.map((o) => o.ms))).toBeGreaterThan(140); // it was slow
      expect(store.health().failingOpenSince).toBeUndefined();
    } finally {
      await store.close();
      client.disconnect();
      await proxy.close();
    }
  });
});

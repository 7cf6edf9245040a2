/**
 * RedisStore's default time limit under a busy Redis and under a hung one, on a real redis-server: a Redis
 * that keeps answering, slowly (blocked by DEBUG SLEEP before each call), is waited for and no request fails
 * open, under traffic too (100 ms per call, half the stall time: a loaded CI machine adds its own delay to
 * each gap between answers); a Redis that stops answering (SIGSTOP) holds calls only until
 * nothing has answered for the stall time (DEFAULT_STALL_MS), then calls fail within the short limit until it
 * answers again.
 */

import { type Check, DEFAULT_STALL_MS } from '@sluice/core/store';
import { DEFAULT_MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, RedisStore } from '@sluice/redis';
import { describe, expect, it, vi } from 'vitest';
import { randomPrefix, redisSuite } from './support/redis.js';

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
    for (let i = 0; i < 4; i += 1) outcomes.push(await callWhileBusy(store, 2.5 * DEFAULT_TIMEOUT_MS));
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

  it('Redis slowed to 100 ms per call but answering: waited for, nothing fails open', async () => {
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      logger: { warn: () => {} },
    });
    await store.evaluate([check], Date.now());
    let slowing = true;
    // Back to back, from another connection: Redis answers the store's calls only between two sleeps.
    const slower = (async () => {
      while (slowing) await redis.admin.debug('SLEEP', 0.1);
    })();
    const run = traffic(store, 20);
    await pause(2000);
    slowing = false;
    await slower;
    await run.stop();
    const codes = new Set(run.outcomes.map((o) => o.outcome));
    expect([...codes]).toEqual(['ok']);
    expect(Math.max(...run.outcomes.map((o) => o.ms))).toBeGreaterThan(60); // it was slow
    expect(store.health().failingOpenSince).toBeUndefined();
    await store.close();
  });
});

/**
 * RedisStore's default time limit under a busy Redis and under a hung one, on a real redis-server: a Redis
 * that keeps answering, slowly (blocked by DEBUG SLEEP before each call), is waited for and no request fails
 * open; a Redis that stops answering (SIGSTOP) holds the first call for the ceiling, then calls fail within
 * the short limit until it answers again.
 */

import type { Check } from '@sluice/core/store';
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

  it('a hung Redis (SIGSTOP): the first call waits the ceiling, the next ones the short limit, until it answers', async () => {
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
      expect(first).toBeGreaterThanOrEqual(DEFAULT_MAX_TIMEOUT_MS - 5);
      expect(first).toBeLessThan(DEFAULT_MAX_TIMEOUT_MS + 300);
      started = performance.now();
      await expect(store.evaluate([check], Date.now())).rejects.toMatchObject({
        code: 'ERR_SLUICE_STORE_TIMEOUT',
      });
      expect(performance.now() - started).toBeLessThan(DEFAULT_MAX_TIMEOUT_MS / 2);
    } finally {
      process.kill(redis.server.pid, 'SIGCONT');
    }
    // The late answers show Redis alive: a call waits again, and is answered.
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 5 });
    expect(await callWhileBusy(store, 5 * DEFAULT_TIMEOUT_MS)).toBe('ok');
    await store.close();
  });
});

/**
 * What a RedisStore tells about itself: health() for readiness probes through a real outage and a hung
 * Redis; one log line when Redis becomes unreachable and one when it is back (instead of ioredis's flood
 * for a client without an error listener); a warning for an evicting maxmemory-policy; and redisRules()
 * closing its subscription with the app's client.
 */

import { StoreError } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { publishRules, RedisStore, recommendedRedisOptions, redisRules } from '@sluice/redis';
import { Redis, type RedisOptions } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomPrefix, ready, startRedis } from './support/redis.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function check(): Check {
  return {
    rule: 'health_rule',
    tag: 'healthTagAAAAAAAAAAAAA',
    algorithm: 'fixed_window',
    params: { limit: 100, windowMs: 60_000, burst: 100 },
    cost: 1,
    mode: 'enforce',
  };
}

/** A private server for one test and a client to it (not waited for), both stopped after the test. */
async function serverAndClient(args: readonly string[] = [], options: RedisOptions = {}) {
  const server = await startRedis({ args });
  cleanups.push(() => server.stop());
  const client = new Redis({ host: server.host, port: server.port, ...options });
  cleanups.push(() => client.disconnect());
  return { server, client };
}

/** A logger that keeps its lines. */
function recorder() {
  const lines: string[] = [];
  return { lines, logger: { warn: (line: string) => lines.push(line) } };
}

const codes = (lines: readonly string[]) => lines.map((line) => /\[(\w+)\]$/.exec(line)?.[1]);

/** Calls the store every 25 ms until it answers from Redis; the `now` values it used. */
async function untilAnswered(store: RedisStore, start: number): Promise<number> {
  for (let now = start; now < start + 400; now++) {
    try {
      await store.evaluate([check()], now);
      return now;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error('Redis never answered again');
}

describe('health() and the outage notices', () => {
  it('through a real outage and restart: connected, breaker, failing open since, and one line each way', async () => {
    // The user's client has NO error listener: ioredis would print every failed reconnect.
    const first = await serverAndClient([], recommendedRedisOptions);
    const client = first.client;
    await ready(client);
    const ioredisLines = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { lines, logger } = recorder();
    const store = new RedisStore({
      client,
      prefix: randomPrefix(),
      timeoutMs: 200,
      breaker: { failures: 3, cooldownMs: 100 },
      logger,
    });
    await store.evaluate([check()], 1000);
    expect(store.health()).toEqual({ connected: true, breaker: 'closed', pending: 0 });

    await first.server.stop();
    // Let ioredis fail to reconnect several times meanwhile.
    for (let now = 2000; now < 2010; now++) {
      await expect(store.evaluate([check()], now)).rejects.toBeInstanceOf(StoreError);
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    const down = store.health();
    expect(down).toMatchObject({ connected: false, breaker: 'open', pending: 0, failingOpenSince: 2000 });
    expect(codes(lines)).toEqual(['SLUICE_STORE_UNREACHABLE']);
    expect(lines[0]).toContain('failing open');

    const restarted = await startRedis({ port: first.server.port });
    cleanups.push(() => restarted.stop());
    const back = await untilAnswered(store, 3000);
    expect(store.health()).toEqual({ connected: true, breaker: 'closed', pending: 0 });
    expect(codes(lines)).toEqual(['SLUICE_STORE_UNREACHABLE', 'SLUICE_STORE_RECOVERED']);
    expect(lines[1]).toContain(`after ${back - 2000} ms`);
    // ioredis said nothing: the store's listener took its "Unhandled error event" lines.
    expect(ioredisLines.mock.calls.filter((call) => String(call[0]).includes('[ioredis]'))).toEqual([]);
    await store.close();
  });

  it('a hung Redis (DEBUG SLEEP): failing since the first timeout, half_open while the probe is out', async () => {
    const { server, client } = await serverAndClient();
    const admin = new Redis({ host: server.host, port: server.port });
    cleanups.push(() => admin.disconnect());
    await Promise.all([ready(client), ready(admin)]);
    const { lines, logger } = recorder();
    const store = new RedisStore({
      client,
      prefix: randomPrefix(),
      timeoutMs: 30,
      breaker: { failures: 2, cooldownMs: 100 },
      fallback: { gateways: 2 },
      logger,
    });
    await store.evaluate([check()], 0);
    const sleeping = admin.debug('SLEEP', 0.6);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store.evaluate([check()], 10); // answered by the fallback
    expect(store.health()).toMatchObject({ connected: true, breaker: 'closed', failingOpenSince: 10 });
    expect(lines).toEqual([]); // one timeout is no outage
    await store.evaluate([check()], 20);
    expect(store.health()).toMatchObject({ connected: false, breaker: 'open', failingOpenSince: 10 });
    expect(codes(lines)).toEqual(['SLUICE_STORE_UNREACHABLE']);
    expect(lines[0]).toContain('in-process fallback');
    expect(store.health().pending).toBe(2); // both calls still wait for the sleeping server

    const probe = store.evaluate([check()], 200);
    expect(store.health().breaker).toBe('half_open');
    await probe;
    await sleeping;
    await untilAnswered(store, 300);
    expect(store.health()).toEqual({ connected: true, breaker: 'closed', pending: 0 });
  });
});

describe('stores sharing a client', () => {
  it('add one listener per event however many share it, and give the client back when the last closes', async () => {
    const { client } = await serverAndClient();
    await ready(client);
    const before = ['error', 'close', 'ready'].map((event) => client.listenerCount(event));
    const stores = Array.from({ length: 20 }, () => new RedisStore({ client, logger: { warn: () => {} } }));
    expect(['error', 'close', 'ready'].map((event) => client.listenerCount(event))).toEqual(
      before.map((n) => n + 1),
    );
    for (const store of stores) await store.close();
    expect(['error', 'close', 'ready'].map((event) => client.listenerCount(event))).toEqual(before);
  });
});

describe('maxmemory-policy', () => {
  it('warns once when Redis may evict limiter keys (allkeys-lru), also for a client not ready yet', async () => {
    const { client } = await serverAndClient(['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru']);
    const { lines, logger } = recorder();
    const store = new RedisStore({ client, prefix: randomPrefix(), logger, timeoutMs: 5000 }); // before the client is ready
    await ready(client);
    await vi.waitFor(() => expect(codes(lines)).toEqual(['SLUICE_REDIS_EVICTION']));
    expect(lines[0]).toContain('allkeys-lru');
    await store.evaluate([check()], Date.now());
    expect(lines).toHaveLength(1);
  });

  it('says nothing under noeviction (the default)', async () => {
    const { client } = await serverAndClient();
    await ready(client);
    const { lines, logger } = recorder();
    const store = new RedisStore({ client, prefix: randomPrefix(), logger, timeoutMs: 5000 }); // the first call loads the script: no race with 20 ms on a loaded machine
    await store.evaluate([check()], Date.now()); // answered after the CONFIG GET sent at construction
    expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    expect(lines).toEqual([]);
  });
});

describe('redisRules() and the end of the app', () => {
  it('closes its subscriber connection when the app quits its client, close() or not', async () => {
    const { server, client: admin } = await serverAndClient();
    // The app's client: quit by the test, never by a cleanup.
    const client = new Redis({ host: server.host, port: server.port, ...recommendedRedisOptions });
    await ready(client);
    const subscribed = async () =>
      String(await admin.call('CLIENT', 'LIST'))
        .split('\n')
        .filter((line) => / sub=[1-9]/.test(line)).length;
    await publishRules(
      client,
      'domain: app\nrules:\n  - {name: all, match: {}, key: [], global: true, limit: {requests: 5, per: 1s}}\n',
    );
    const source = await redisRules(client, { domain: 'app' });
    expect(source.current.domain).toBe('app');
    await vi.waitFor(async () => expect(await subscribed()).toBe(1));
    await client.quit();
    await vi.waitFor(async () => expect(await subscribed()).toBe(0), { timeout: 5000 });
  });
});

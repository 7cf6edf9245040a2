/**
 * @sluice/client against Sluice servers counting in a real redis-server (a private one, see
 * test/support/redis.ts): 429s from Redis counters, and 503s during a real outage (the server stopped),
 * on each framework, with the retry budget keeping retries from multiplying the load.
 */
import { type ClientOptions, createFetch, type GiveUpEvent } from '@sluice/client';
import type { RuleSpec } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from '../support/redis.js';
import { FRAMEWORKS, type Framework, startServer, type TestServer } from './servers.js';
import { VirtualTime } from './virtualTime.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** Fails closed: while Redis is down, requests get 503 with Retry-After instead of passing unlimited. */
const critical: RuleSpec = {
  name: 'critical',
  key: ['ip'],
  limit: { requests: 1000, per: '60s' },
  algorithm: 'fixed_window',
  on_store_error: 'deny',
};

let redis: RedisServer;
let server: TestServer | undefined;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const client of clients.splice(0)) client.disconnect();
  // Each test finds Redis up, wherever the last one left it.
  if (!(await isUp(redis))) redis = await startRedis({ port: redis.port });
});

afterAll(async () => {
  await redis.stop();
});

async function isUp(target: RedisServer): Promise<boolean> {
  const probe = new Redis({
    host: target.host,
    port: target.port,
    lazyConnect: true,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A RedisStore on its own ioredis client (connected), reconnecting fast. */
async function redisStore(): Promise<RedisStore> {
  const client = new Redis({
    host: redis.host,
    port: redis.port,
    ...recommendedRedisOptions,
    retryStrategy: () => 50,
  });
  client.on('error', () => {}); // connection errors are the point here
  clients.push(client);
  await ready(client);
  return new RedisStore({ client, prefix: randomPrefix('client'), timeoutMs: 500 });
}

async function start(framework: Framework, rule: RuleSpec, clock?: () => number): Promise<TestServer> {
  server = await startServer(framework, {
    rules: { domain: 'client', rules: [rule] },
    store: await redisStore(),
    ...(clock ? { clock } : {}),
  });
  return server;
}

it('honours a 429 counted in Redis: waits Retry-After plus jitter, then gets through', async () => {
  const time = new VirtualTime(T0);
  const { url, hits } = await start(
    'fastify',
    { name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '10s' }, algorithm: 'fixed_window' },
    time.clock,
  );
  const client = createFetch({ pacing: false, now: time.clock, sleep: time.sleep, random: () => 0.5 });
  expect((await client(`${url}/items`)).status).toBe(200);
  expect((await client(`${url}/items`)).status).toBe(200);
  expect(time.waits).toEqual([10_500]);
  expect(hits).toHaveLength(3);
});

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  'a Redis outage behind %s',
  (framework) => {
    it('retries the 503s of a failed-closed rule until Redis is back', async () => {
      const { url } = await start(framework, critical);
      expect((await fetch(`${url}/items`)).status).toBe(200);
      await redis.stop();
      let restarting: Promise<RedisServer> | undefined;
      const statuses: number[] = [];
      const client = createFetch({
        maxAttempts: 40,
        jitterMs: 100,
        retryBudget: false,
        // Real waits (Retry-After: 1, plus jitter); Redis comes back during the first.
        events: {
          retry: (event) => {
            statuses.push(event.status);
            restarting ??= startRedis({ port: redis.port });
          },
        },
      });
      const response = await client(`${url}/items`);
      if (restarting) redis = await restarting;
      expect(response.status).toBe(200);
      expect(statuses[0]).toBe(503);
      expect(statuses.every((status) => status === 503)).toBe(true);
    }, 60_000);
  },
);

describe('the retry budget during an outage', () => {
  /** Sends `count` requests one after the other while Redis is down; answers attempts the server saw. */
  async function duringOutage(count: number, options: ClientOptions) {
    const { url, hits } = await start('fastify', critical);
    await redis.stop();
    const exhausted: GiveUpEvent[] = [];
    // The outage lasts: waiting out each Retry-After (and the pacing the 503s' RateLimit fields ask for)
    // on the real clock would only slow the test.
    const time = new VirtualTime(T0);
    const client = createFetch({
      ...options,
      now: time.clock,
      sleep: time.sleep,
      events: { budgetExhausted: (event) => exhausted.push(event) },
    });
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) statuses.push((await client(`${url}/items`)).status);
    return { statuses, attempts: hits.length, exhausted };
  }

  it('keeps retries under the share of requests it allows, then gives 503s back at once', async () => {
    const { statuses, attempts, exhausted } = await duringOutage(30, {
      maxAttempts: 3,
      retryBudget: { ratio: 0.1, reserve: 2 },
    });
    expect(statuses).toEqual(Array(30).fill(503));
    // 30 requests, the 2 retries of the reserve, and one more per 10 requests earned.
    expect(attempts).toBeLessThanOrEqual(30 + 2 + 3);
    expect(attempts).toBeGreaterThanOrEqual(30 + 2);
    expect(exhausted.length).toBeGreaterThan(20);
    expect(exhausted[0]).toMatchObject({ status: 503, reason: 'budget_exhausted' });
  }, 30_000);

  it('without a budget, the same outage takes every attempt (the test above can fail)', async () => {
    const { attempts, exhausted } = await duringOutage(30, { maxAttempts: 3, retryBudget: false });
    expect(attempts).toBe(90);
    expect(exhausted).toEqual([]);
  }, 30_000);
});

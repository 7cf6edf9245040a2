/**
 * Rule policies through the public API, real HTTP on Express, Koa and Fastify, counters in a private
 * redis-server: `idempotent` (a retried POST with the same Idempotency-Key is not charged twice) and `ban`
 * with `escalate` (429 with Retry-After the rest of the ban, the body naming it), each request still ONE
 * script call, every key with a TTL and no Idempotency-Key or address in clear.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileRules, createLimiter, type RateLimitOptions, type RuleSpec } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import { RedisStore } from '@sluice/redis';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite, scanKeys, scriptCalls } from './support/redis.js';

const redis = redisSuite();
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Options = RateLimitOptions<never>;

/** A server answering 200 on every path behind the framework's middleware; its base URL. */
async function serve(framework: string, options: Options): Promise<string> {
  if (framework === 'fastify') {
    const app = Fastify();
    await app.register(fastifyRateLimit, options as never);
    app.all('/*', async () => ({ ok: true }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());
    return url;
  }
  const listen = (handler: RequestListener) =>
    new Promise<string>((resolve) => {
      const server = createServer(handler);
      server.listen(0, '127.0.0.1', () => {
        closers.push(() => new Promise((done) => server.close(done)));
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      });
    });
  if (framework === 'express') {
    const app = express();
    app.use(expressRateLimit(options as never));
    app.all('/{*path}', (_req, res) => {
      res.json({ ok: true });
    });
    return listen(app as unknown as RequestListener);
  }
  const app = new Koa();
  app.use(koaRateLimit(options as never));
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  return listen(app.callback());
}

/** A RedisStore on the suite's server with a fresh prefix, and the prefix. */
function store(): { store: RedisStore; prefix: string } {
  const prefix = randomPrefix('pol');
  const redisStore = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
  return { store: redisStore, prefix };
}

function rules(...specs: RuleSpec[]) {
  return { domain: 'policies', rules: specs };
}

const FRAMEWORKS = ['express', 'koa', 'fastify'] as const;

/** The idempotent requests both stores must answer alike: statuses, and a retry's RateLimit unchanged. */
async function idempotentOrders(url: string): Promise<void> {
  const post = (key?: string) =>
    fetch(`${url}/orders`, { method: 'POST', headers: key ? { 'Idempotency-Key': key } : {} });
  const first = await post('order-7f3a');
  const retry = await post('order-7f3a');
  expect([first.status, retry.status]).toEqual([200, 200]);
  expect(retry.headers.get('ratelimit')).toBe(first.headers.get('ratelimit'));
  expect((await post('order-91bc')).status).toBe(200);
  // The limit is spent: a new order is refused, a retry of a charged one is still answered.
  expect((await post('order-c001')).status).toBe(429);
  expect((await post()).status).toBe(429);
  expect((await post('order-7f3a')).status).toBe(200);
}

const ORDERS: RuleSpec = {
  name: 'orders',
  key: ['ip'],
  limit: { requests: 2, per: '1m' },
  idempotent: '10m',
};
const NOON = () => Date.UTC(2026, 10, 30, 12);

describe.each(FRAMEWORKS)('on %s', (framework) => {
  it('idempotent on MemoryStore: a retry with the same Idempotency-Key is not charged again', async () => {
    await idempotentOrders(await serve(framework, { clock: NOON, rules: rules(ORDERS) }));
  });

  it('idempotent on Redis: the same, in one script call per request, markers hashed with a TTL', async () => {
    const { store: redisStore, prefix } = store();
    const url = await serve(framework, { store: redisStore, clock: NOON, rules: rules(ORDERS) });
    const calls = await scriptCalls(redis.admin);
    await idempotentOrders(url);
    expect((await scriptCalls(redis.admin)) - calls).toBe(6);
    const keys = await scanKeys(redis.admin, prefix);
    expect(keys.filter((key) => key.includes(':orders:idem:'))).toHaveLength(2);
    expect(keys.join(' ')).not.toMatch(/order-|127\.0\.0\.1/);
    for (const key of keys) expect(await redis.admin.pttl(key)).toBeGreaterThan(0);
  });

  it('ban: after repeated denials the key gets 429 with the rest of the ban, escalating', async () => {
    const { store: redisStore, prefix } = store();
    let now = Date.UTC(2026, 10, 30, 12);
    const url = await serve(framework, {
      store: redisStore,
      clock: () => now,
      rules: rules({
        name: 'login',
        key: ['ip'],
        algorithm: 'fixed_window',
        limit: { requests: 1, per: '1m' },
        ban: { after: 2, within: '1m', for: '10m' },
        escalate: ['1h'],
      }),
    });
    const get = () => fetch(`${url}/login`);
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'rate_limited', rule: 'login', retryAfter: 60 });
    const banned = await get();
    expect(banned.status).toBe(429);
    expect(banned.headers.get('retry-after')).toBe('600');
    expect(await banned.json()).toEqual({
      error: 'rate_limited',
      rule: 'login',
      retryAfter: 600,
      reason: 'ban',
      bannedUntil: new Date(now + 600_000).toISOString(),
    });
    // The window has passed but the ban has not: still refused, with the rest of the ban.
    now += 120_000;
    const still = await get();
    expect([still.status, still.headers.get('retry-after')]).toEqual([429, '480']);
    // After the ban, two more denials: the second ban is the escalated one.
    now += 480_000;
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    const again = await get();
    expect([again.status, again.headers.get('retry-after')]).toEqual([429, '3600']);
    const keys = await scanKeys(redis.admin, prefix);
    const banKey = keys.find((key) => key.endsWith(':login:ban'));
    const counterKey = keys.find((key) => !key.endsWith(':ban'));
    // The ban state shares the counter's hash tag (one Cluster slot), and expires.
    expect(banKey?.split('}')[0]).toBe(counterKey?.split('}')[0]);
    for (const key of keys) expect(await redis.admin.pttl(key)).toBeGreaterThan(0);
  });
});

describe('lifting a ban on Redis', () => {
  it('limiter.unban deletes the key ban state: the next request is decided by the limit', async () => {
    const { store: redisStore, prefix } = store();
    const warnings: string[] = [];
    let now = Date.UTC(2026, 10, 30, 12);
    const limiter = createLimiter({
      store: redisStore,
      clock: () => now,
      logger: { warn: (message) => warnings.push(message) },
      rules: compileRules(
        rules({
          name: 'login',
          key: ['ip'],
          limit: { requests: 1, per: '1s' },
          ban: { after: 1, within: '1m', for: '1h' },
        }),
      ),
    });
    closers.push(() => limiter.close());
    const ip = { ip: '203.0.113.9' };
    await limiter.check(ip);
    expect((await limiter.check(ip)).reason).toBe('ban');
    expect((await scanKeys(redis.admin, prefix)).filter((key) => key.endsWith(':login:ban'))).toHaveLength(1);
    expect(await limiter.unban('login', ip)).toBe(true);
    expect((await scanKeys(redis.admin, prefix)).filter((key) => key.endsWith(':login:ban'))).toEqual([]);
    now += 2000;
    expect((await limiter.check(ip)).allowed).toBe(true);
    expect(await limiter.unban('login', ip)).toBe(false);
    expect(warnings).toHaveLength(2);
  });
});

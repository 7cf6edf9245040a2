import { MemoryStore, type Store } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from '../support/redis.js';
import { adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

// Every adapter checks a route's rules (Express, Koa and Hono: limiter.route(); Fastify: config.rateLimit; Nest:
// @RateLimit) with the global ones in one engine call: a request the route rule denies consumes nothing from the
// global rules, and a request costs one store call.

const routeRule = { name: 'limited_route', key: ['ip'], limit: { requests: 1, per: '60s' } };

/** Script calls Redis ran (EVAL, EVALSHA, FCALL and their read-only forms), from INFO commandstats. */
async function scriptCalls(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  let calls = 0;
  for (const line of stats.split('\r\n')) {
    const match = /^cmdstat_(?:eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):calls=(\d+),/.exec(line);
    if (match) calls += Number(match[1]);
  }
  return calls;
}

/** The global rule's remaining, as `/info` shows it (that request counts too). */
async function globalRemaining(url: string): Promise<number> {
  const info = await request(url).get('/info').expect(200);
  expect(info.body.rule).toBe('per_ip');
  return info.body.remaining as number;
}

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'route rules in one engine call: %s',
  (_name, adapter) => {
    let running: RunningApp | undefined;
    let server: RedisServer | undefined;
    let client: Redis | undefined;

    beforeAll(async () => {
      server = await startRedis();
      client = new Redis({ host: server.host, port: server.port, ...recommendedRedisOptions });
      await ready(client);
    });

    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    afterAll(async () => {
      client?.disconnect();
      await server?.stop();
    });

    function start(store: Store): Promise<RunningApp> {
      return adapter.start({
        options: { store, clock: () => T0, logger: { warn: () => {} }, rules: rules(perIp(10)) },
        routeRule,
      });
    }

    it('a route-rule denial leaves the global rule as it was (MemoryStore)', async () => {
      running = await start(new MemoryStore());
      await request(running.url).get('/limited').expect(200);
      expect(await globalRemaining(running.url)).toBe(8);
      const denied = await request(running.url).get('/limited').expect(429);
      expect(denied.body.rule).toBe('limited_route');
      expect(await request(running.url).get('/limited').expect(429)).toBeTruthy();
      // Two denials later, the global rule has counted only the /info requests.
      expect(await globalRemaining(running.url)).toBe(7);
    });

    it('costs one script call a request, global and route rules together, and denies all or nothing (RedisStore)', async () => {
      const redis = client as Redis;
      running = await start(new RedisStore({ client: redis, prefix: randomPrefix(), timeoutMs: 2000 }));
      // A first request loads what it needs; count from the second.
      await request(running.url).get('/health').expect(200);
      const before = await scriptCalls(redis);
      await request(running.url).get('/limited').expect(200);
      const afterAllowed = await scriptCalls(redis);
      expect(afterAllowed - before).toBe(1);
      await request(running.url).get('/limited').expect(429);
      expect((await scriptCalls(redis)) - afterAllowed).toBe(1);
      // /health, the allowed /limited and this /info: the denied request took nothing.
      expect(await globalRemaining(running.url)).toBe(7);
    });

    it('decides a route with afterBody in one script call, its cost read from the parsed body (RedisStore)', async () => {
      const redis = client as Redis;
      const store = new RedisStore({ client: redis, prefix: randomPrefix(), timeoutMs: 2000 });
      running = await adapter.start({
        options: { store, clock: () => T0, logger: { warn: () => {} }, rules: rules(perIp(1000)) },
        batchRule: { name: 'batch_ops', key: ['ip'], limit: { requests: 100, per: '60s' } },
        batchCost: (body) => Math.min((body as { ops: unknown[] }).ops.length, 50),
      });
      await request(running.url).get('/health').expect(200);
      const before = await scriptCalls(redis);
      const ops = Array.from({ length: 100 }, (_, id) => ({ id }));
      const batch = await request(running.url).post('/batch').send({ ops });
      expect(batch.status).toBeLessThan(300);
      expect(batch.headers.ratelimit).toMatch(/^"batch_ops";r=50;/);
      expect((await scriptCalls(redis)) - before).toBe(1);
    });

    it('counts the global rules once for a route without a route rule, in one call', async () => {
      const redis = client as Redis;
      running = await start(new RedisStore({ client: redis, prefix: randomPrefix(), timeoutMs: 2000 }));
      await request(running.url).get('/health').expect(200);
      const before = await scriptCalls(redis);
      await request(running.url).get('/search').expect(200);
      expect((await scriptCalls(redis)) - before).toBe(1);
      expect(await globalRemaining(running.url)).toBe(7);
    });
  },
);

describe('route lookup through mounted routers', () => {
  const options = { clock: () => T0, logger: { warn: () => {} }, rules: rules(perIp(10)) };

  it('Express: a route in a mounted Router is found (one call), a limiter mounted at a path falls back to two', async () => {
    const { rateLimit } = await import('@sluice/express');
    const express = (await import('express')).default;
    const limiter = rateLimit({ ...options, store: new MemoryStore() });
    const app = express();
    app.use(limiter);
    const api = express.Router();
    api.get('/items/:id', limiter.route(routeRule), (_req, res) => void res.json({ ok: true }));
    app.use('/api', api);
    app.get(
      '/info',
      (req, res) => void res.json({ remaining: req.rateLimit?.remaining, rule: req.rateLimit?.rule }),
    );
    await request(app).get('/api/items/1').expect(200);
    const denied = await request(app).get('/api/items/2').expect(429);
    expect(denied.body.rule).toBe('limited_route');
    // The denied request took nothing from per_ip: /api/items/1 and /info only.
    expect((await request(app).get('/info').expect(200)).body).toEqual({ remaining: 8, rule: 'per_ip' });
    await limiter.limiter.close();
  });

  it('Koa: a route of a prefixed router is found (one call)', async () => {
    const { rateLimit } = await import('@sluice/koa');
    const Koa = (await import('koa')).default;
    const Router = (await import('@koa/router')).default;
    const limiter = rateLimit({ ...options, store: new MemoryStore() });
    const app = new Koa();
    app.use(limiter);
    const router = new Router({ prefix: '/api' });
    router.get('/items/:id', limiter.route(routeRule), (ctx) => {
      ctx.body = { ok: true };
    });
    router.get('/info', (ctx) => {
      ctx.body = { remaining: ctx.state.rateLimit?.remaining, rule: ctx.state.rateLimit?.rule };
    });
    app.use(router.routes());
    const server = app.callback();
    await request(server).get('/api/items/1').expect(200);
    const denied = await request(server).get('/api/items/2').expect(429);
    expect(denied.body.rule).toBe('limited_route');
    expect((await request(server).get('/api/info').expect(200)).body).toEqual({
      remaining: 8,
      rule: 'per_ip',
    });
    await limiter.limiter.close();
  });

  it('Express: where the route cannot be looked up (a sub-app), a global rule keyed by route warns once', async () => {
    const { rateLimit } = await import('@sluice/express');
    const express = (await import('express')).default;
    const warnings: string[] = [];
    const byRoute = { name: 'per_ip_route', key: ['ip', 'route'], limit: { requests: 5, per: '60s' } };
    const limiter = rateLimit({
      ...options,
      logger: { warn: (text: string) => void warnings.push(text) },
      rules: rules(byRoute),
      store: new MemoryStore(),
    });
    const app = express();
    app.use(limiter);
    const admin = express();
    admin.get('/users/:id', (_req, res) => void res.json({ ok: true }));
    app.use('/admin', admin);
    app.get('/users/:id', (_req, res) => void res.json({ ok: true }));
    await request(app).get('/users/1').expect(200);
    expect(warnings).toEqual([]);
    await request(app).get('/admin/users/1').expect(200);
    expect(warnings.join('\n')).toMatch(/rule "per_ip_route" is keyed by route.*\[SLUICE_ROUTE_KEY_PATH\]/);
    await limiter.limiter.close();
  });

  it('Express: a global limiter mounted under a path still checks a route rule, apart', async () => {
    const { rateLimit } = await import('@sluice/express');
    const express = (await import('express')).default;
    const limiter = rateLimit({ ...options, store: new MemoryStore() });
    const app = express();
    app.use('/api', limiter);
    app.get('/api/items/:id', limiter.route(routeRule), (_req, res) => void res.json({ ok: true }));
    await request(app).get('/api/items/1').expect(200);
    expect((await request(app).get('/api/items/2').expect(429)).body.rule).toBe('limited_route');
    await limiter.limiter.close();
  });
});

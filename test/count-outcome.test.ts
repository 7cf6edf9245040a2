/**
 * Counting by outcome (`count:`) through the public API, over real HTTP on Express, Koa, Fastify and Hono, on
 * MemoryStore and on a private redis-server: only the responses a rule counts stay charged, a refund never
 * crosses into another window, an aborted request is charged, and only responses that need a refund make a
 * store call.
 */
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { MemoryStore, type RateLimitOptions, type RuleSpec } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as honoRateLimit } from '@sluice/hono';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import { RedisStore } from '@sluice/redis';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { CountingStore, until } from './support/counting-store.js';
import { randomPrefix, redisSuite, scriptCalls } from './support/redis.js';

const redis = redisSuite();

/** Responses held open by `/hold` until the test answers them; each resolves `closed` when its exchange ends. */
interface Held {
  answer(status: number): void;
  readonly closed: Promise<void>;
}

/** The app each framework serves: `/login?status=N` answers N; `/hold` waits for the test. */
interface Served {
  readonly url: string;
  readonly held: Held[];
  close(): Promise<void>;
}

type Start = (options: RateLimitOptions<unknown>, held: Held[]) => Promise<Served>;

function holding(res: ServerResponse, answer: (status: number) => void): Held {
  return { answer, closed: once(res, 'close').then(() => undefined) };
}

async function serve(server: Server, held: Held[], close: () => Promise<void>): Promise<Served> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held, close };
}

const statusOf = (query: unknown) => Number((query as { status?: string }).status ?? 200);

const ADAPTERS: Record<'express' | 'koa' | 'fastify' | 'hono', Start> = {
  async express(options, held) {
    const app = express();
    app.use(expressRateLimit(options as never));
    app.get('/login', (req, res) => void res.status(statusOf(req.query)).send('login'));
    app.get(
      '/hold',
      (_req, res) => void held.push(holding(res, (status) => res.status(status).send('held'))),
    );
    const server = createServer(app);
    return serve(server, held, () => stop(server));
  },
  async koa(options, held) {
    const app = new Koa();
    app.use(koaRateLimit(options as never));
    app.use(async (ctx) => {
      if (ctx.path === '/login') {
        ctx.status = statusOf(ctx.query);
        ctx.body = 'login';
        return;
      }
      ctx.status = await new Promise<number>((resolve) => held.push(holding(ctx.res, resolve)));
      ctx.body = 'held';
    });
    const server = createServer(app.callback());
    return serve(server, held, () => stop(server));
  },
  async fastify(options, held) {
    const app = Fastify();
    await app.register(fastifyRateLimit, options as never);
    app.get('/login', async (request, reply) => reply.code(statusOf(request.query)).send('login'));
    app.get('/hold', (_request, reply) => {
      held.push(holding(reply.raw, (status) => void reply.code(status).send('held')));
      return reply;
    });
    await app.ready();
    return serve(app.server, held, () => app.close());
  },
  async hono(options, held) {
    const app = new Hono();
    app.use(honoRateLimit(options as never));
    app.get('/login', (c) => c.text('login', statusOf(c.req.query()) as never));
    app.get(
      '/hold',
      (c) =>
        new Promise<Response>((resolve) => {
          const res = (c.env as { outgoing: ServerResponse }).outgoing;
          held.push(holding(res, (status) => resolve(c.text('held', status as never))));
        }),
    );
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    return serve(server, held, () => stop(server));
  },
};

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()));
});

type StoreKind = 'memory' | 'redis';

async function start(
  adapter: keyof typeof ADAPTERS,
  kind: StoreKind,
  rule: Partial<RuleSpec>,
  clock?: () => number,
  others: readonly RuleSpec[] = [],
): Promise<Served & { store: CountingStore }> {
  const inner =
    kind === 'memory'
      ? new MemoryStore()
      : new RedisStore({ client: redis.client, prefix: randomPrefix('count'), timeoutMs: 5000 });
  const store = new CountingStore(inner);
  const rules = [
    { name: 'logins', key: ['ip'], algorithm: 'fixed_window', limit: { requests: 3, per: '1m' }, ...rule },
    ...others,
  ];
  const options = {
    rules: { rules },
    store,
    ...(clock ? { clock } : {}),
  } as unknown as RateLimitOptions<unknown>;
  const app = await ADAPTERS[adapter](options, []);
  running.push(app);
  return { ...app, store };
}

/** Sends one GET; resolves with the status and the RateLimit-Remaining the limiter set (when it did). */
async function get(url: string): Promise<{ status: number; remaining: number | undefined }> {
  const response = await fetch(url);
  await response.text();
  const policy = response.headers.get('ratelimit');
  const remaining = policy?.match(/r=(\d+)/)?.[1];
  return { status: response.status, remaining: remaining === undefined ? undefined : Number(remaining) };
}

describe.each(['express', 'koa', 'fastify', 'hono'] as const)('count on %s', (adapter) => {
  describe.each(['memory', 'redis'] as const)('with %s', (kind) => {
    it('count: failed keeps only failed logins: successes are refunded, the fourth failure is refused', async () => {
      const app = await start(adapter, kind, { count: 'failed' });
      for (let i = 1; i <= 5; i++) {
        expect((await get(`${app.url}/login?status=200`)).status).toBe(200);
        await until(() => app.store.refunds === i);
      }
      const releasesAfterSuccesses = app.store.releases;
      for (let i = 0; i < 3; i++) expect((await get(`${app.url}/login?status=401`)).status).toBe(401);
      expect((await get(`${app.url}/login?status=200`)).status).toBe(429);
      // Counted responses (and the denial) made no store call when they ended.
      expect(app.store.releases).toBe(releasesAfterSuccesses);
      expect(app.store.releases).toBe(5);
    });

    it('count: succeeded keeps only successes: failures are free', async () => {
      const app = await start(adapter, kind, { count: 'succeeded' });
      for (let i = 1; i <= 4; i++) {
        expect((await get(`${app.url}/login?status=500`)).status).toBe(500);
        await until(() => app.store.refunds === i);
      }
      for (let i = 0; i < 3; i++) expect((await get(`${app.url}/login?status=201`)).status).toBe(201);
      expect((await get(`${app.url}/login?status=500`)).status).toBe(429);
    });

    it('a list of statuses keeps exactly those', async () => {
      const app = await start(adapter, kind, { count: [401, 403] });
      expect((await get(`${app.url}/login?status=404`)).status).toBe(404);
      await until(() => app.store.refunds === 1);
      expect((await get(`${app.url}/login?status=500`)).status).toBe(500);
      await until(() => app.store.refunds === 2);
      expect((await get(`${app.url}/login?status=401`)).status).toBe(401);
      expect((await get(`${app.url}/login?status=403`)).status).toBe(403);
      expect((await get(`${app.url}/login?status=200`)).remaining).toBe(0);
      await until(() => app.store.refunds === 3);
      expect((await get(`${app.url}/login?status=403`)).status).toBe(403);
      expect((await get(`${app.url}/login?status=200`)).status).toBe(429);
    });

    it('a refund never crosses into another window (injectable clock)', async () => {
      let now = Date.UTC(2026, 10, 30, 10, 0, 30); // mid-minute: the window ends at 10:01:00
      const app = await start(adapter, kind, { count: 'failed' }, () => now);
      const pending = fetch(`${app.url}/hold`).then((response) => response.text());
      await until(() => app.held.length === 1);
      now += 60_000; // the next window
      expect((await get(`${app.url}/login?status=401`)).remaining).toBe(2);
      // The held request succeeds now: its charge was in the last window, so nothing comes off this one.
      app.held[0]!.answer(200);
      await pending;
      await until(() => app.store.releases === 1);
      expect((await get(`${app.url}/login?status=401`)).remaining).toBe(1);
    });

    it('an aborted request is charged: nothing is refunded when the client leaves first', async () => {
      const app = await start(adapter, kind, { count: 'failed', limit: { requests: 1, per: '1m' } });
      const { port } = new URL(app.url);
      const client = httpRequest({ host: '127.0.0.1', port, path: '/hold' });
      client.on('error', () => {});
      client.end();
      await until(() => app.held.length === 1);
      client.destroy();
      await app.held[0]!.closed;
      expect((await get(`${app.url}/login?status=200`)).status).toBe(429);
      app.held[0]!.answer(200); // too late: the exchange is over
      expect(app.store.refunds).toBe(0);
    });
  });
});

describe.each(['express', 'koa', 'fastify'] as const)('count on %s with redis: round trips', (adapter) => {
  it('a lease and a refund go back in one script call; a response with nothing to give back makes none', async () => {
    const jobs = {
      name: 'jobs',
      key: ['ip'],
      algorithm: 'concurrency',
      limit: { concurrent: 1 },
    } as RuleSpec;
    const app = await start(
      adapter,
      'redis',
      { count: 'failed', limit: { requests: 1, per: '1m' } },
      undefined,
      [jobs],
    );
    const before = await scriptCalls(redis.admin);
    expect((await get(`${app.url}/login?status=200`)).status).toBe(200);
    await until(() => app.store.releases === 1);
    // One evaluation, one give-back (the concurrency lease and the refund together).
    expect((await scriptCalls(redis.admin)) - before).toBe(2);
    // Both went back: the lease (1 at once) and the charge (1 a minute) leave room for the next request.
    expect((await get(`${app.url}/login?status=401`)).status).toBe(401);
    await until(() => app.store.releases === 2);
    expect(app.store.refunds).toBe(1);
    expect((await get(`${app.url}/login?status=200`)).status).toBe(429);
  });

  it('a counted response of a rule without leases makes no call when it ends', async () => {
    const app = await start(adapter, 'redis', { count: 'failed' });
    const before = await scriptCalls(redis.admin);
    expect((await get(`${app.url}/login?status=401`)).status).toBe(401);
    expect((await get(`${app.url}/login?status=401`)).status).toBe(401);
    // Two evaluations; the ends of two counted responses asked for nothing.
    expect((await scriptCalls(redis.admin)) - before).toBe(2);
    expect(app.store.releases).toBe(0);
  });
});

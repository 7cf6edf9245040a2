/**
 * Issue 26, part 1: a concurrency lease held by a Server-Sent Events response lives as long as the response.
 * Real HTTP (Express, Node's client), a `{concurrent: 2, lease: 2s}` rule: two streams open, a third is refused;
 * 3.5 s later (several lease lifetimes) with both still open, a third is STILL refused; after one closes it is
 * admitted. On MemoryStore and on a private Redis; and a killed process's renewed leases expire. Issue 40: the same
 * on Fastify over a private Redis with every option on its default, run after run, the third stream opened at 3 s
 * and at 6 s, also while the wall clock steps back an hour and returns (what let the leases lapse, silently: the
 * app clock given to Redis followed the step, MemoryStore's did not); no store error, nothing logged.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createLimiter, MemoryStore, type Store } from '@sluice/core';
import { rateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { RedisStore } from '@sluice/redis';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { randomPrefix } from '../support/redis.js';
import { privateRedis, sleep } from './privateRedis.js';
import { streamRules } from './rules.js';

const redisHandle = privateRedis();

/** An SSE app: every stream sends an event each 200 ms until its client goes. */
function sseApp(store: Store): Promise<{ server: Server; url: string }> {
  const app = express();
  app.use(rateLimit({ rules: streamRules(), store }));
  app.get('/events', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    const tick = setInterval(() => res.write('data: tick\n\n'), 200);
    req.on('close', () => clearInterval(tick));
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events` }),
    );
  });
}

interface Stream {
  readonly status: number;
  readonly retryAfter: string | undefined;
  /** Events received so far (a refused request's body is drained, not counted). */
  events(): number;
  close(): void;
}

/** Opens a stream with Node's HTTP client; resolves once the response's head is in. */
function open(url: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false }, (res: IncomingMessage) => {
      let events = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        events += chunk.split('data: tick').length - 1;
      });
      res.on('error', () => {});
      const retry = res.headers['retry-after'];
      resolve({
        status: res.statusCode ?? 0,
        retryAfter: Array.isArray(retry) ? retry[0] : retry,
        events: () => events,
        close: () => req.destroy(),
      });
    });
    req.on('error', (error) => (error.message === 'socket hang up' ? undefined : reject(error)));
  });
}

/** Opens streams until one is admitted, within `ms` (the release travels after the client's close). */
async function admittedWithin(url: string, ms: number): Promise<Stream> {
  const until = Date.now() + ms;
  for (;;) {
    const stream = await open(url);
    if (stream.status === 200 || Date.now() > until) return stream;
    stream.close();
    await sleep(50);
  }
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('sse') })],
];

describe.each(stores)('SSE streams hold their leases while open (%s)', (_name, makeStore) => {
  it('refuses a third stream for as long as two stay open, past several lease lifetimes', async () => {
    const { server, url } = await sseApp(makeStore());
    try {
      const first = await open(url);
      const second = await open(url);
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await open(url);
      expect(third.status).toBe(429);
      expect(Number(third.retryAfter)).toBeGreaterThan(0);
      third.close();

      await sleep(3_500);
      expect(first.events()).toBeGreaterThan(10);
      const late = await open(url);
      expect(late.status).toBe(429);
      late.close();

      first.close();
      const after = await admittedWithin(url, 1_000);
      expect(after.status).toBe(200);
      after.close();
      second.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 15_000);
});

describe('a process holding renewed leases dies', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it('its leases outlive their lease time while it lives, and expire once it is killed', async () => {
    const prefix = randomPrefix('kill');
    child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'holder.ts'), String(redisHandle.server.port), prefix],
      { cwd: join(import.meta.dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child!.stdout!.on('data', (data: Buffer) => (data.toString().includes('held') ? resolve() : undefined));
      child!.once('exit', (code) => reject(new Error(`the holder exited with ${String(code)}`)));
    });
    const limiter = createLimiter({
      rules: streamRules(),
      store: new RedisStore({ client: redisHandle.client, prefix }),
    });
    const third = async () => {
      const decision = await limiter.check({ ip: '10.0.0.1' });
      if (decision.allowed) await limiter.release(decision);
      return decision.allowed;
    };
    expect(await third()).toBe(false);
    await sleep(3_000);
    expect(await third()).toBe(false);

    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    // The last renewal was at most a third of the lease before the kill: within 2 s + margin they are gone.
    const killedAt = Date.now();
    let allowed = false;
    while (!allowed && Date.now() - killedAt < 3_000) {
      allowed = await third();
      if (!allowed) await sleep(100);
    }
    expect(allowed).toBe(true);
    expect(Date.now() - killedAt).toBeGreaterThan(500);
  }, 20_000);
});

/** A Fastify SSE app: every stream sends an event each 200 ms until its client goes. */
async function fastifySseApp(store: Store, seen: { errors: unknown[]; lines: string[] }) {
  const app = Fastify();
  await app.register(fastifyRateLimit, {
    rules: streamRules(),
    store,
    observer: { onStoreError: (_kind, error) => seen.errors.push(error) },
    logger: { warn: (line: string) => seen.lines.push(line) },
  });
  app.get('/events', (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    const tick = setInterval(() => reply.raw.write('data: tick\n\n'), 200);
    request.raw.socket.on('close', () => clearInterval(tick));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/events` };
}

describe('Fastify SSE streams on Redis (default options) hold their leases while open', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Two streams open, a third opened at 3 s and at 6 s: refused both times; `step` moves the wall clock. */
  async function run(step?: (at: number) => void): Promise<void> {
    const seen = { errors: [] as unknown[], lines: [] as string[] };
    const store = new RedisStore({ client: redisHandle.client, prefix: randomPrefix('fsse') });
    const { app, url } = await fastifySseApp(store, seen);
    try {
      const first = await open(url);
      const second = await open(url);
      expect([first.status, second.status]).toEqual([200, 200]);
      for (let second_ = 1; second_ <= 6; second_++) {
        await sleep(1000);
        step?.(second_);
        if (second_ !== 3 && second_ !== 6) continue;
        const third = await open(url);
        third.close();
        expect(third.status, `a third stream at ${second_} s`).toBe(429);
      }
      expect(first.events()).toBeGreaterThan(20);
      expect(second.events()).toBeGreaterThan(20);
      first.close();
      const after = await admittedWithin(url, 1_000);
      expect(after.status).toBe(200);
      after.close();
      second.close();
      expect(seen.errors).toEqual([]);
      expect(seen.lines).toEqual([]);
    } finally {
      // A failed expectation leaves streams open, which app.close() would wait for.
      app.server.closeAllConnections();
      await app.close();
    }
  }

  it('refuses a third stream at 3 s and at 6 s, run after run', async () => {
    for (let i = 0; i < 4; i++) await run();
  }, 60_000);

  it('and while the wall clock steps back an hour (at 1 s) and returns (at 4 s)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    for (let i = 0; i < 2; i++) {
      await run((at) => {
        if (at === 1) vi.setSystemTime(Date.now() - 3_600_000);
        if (at === 4) vi.setSystemTime(Date.now() + 3_600_000);
      });
    }
  }, 40_000);
});

/**
 * Real Sluice servers for the client tests: the same two routes on Fastify, Express and Koa, limited by
 * the given rules, on loopback. Every request that reaches the server is logged with the headers the
 * client controls, before the limiter decides, so that a test sees attempts the limiter refused.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import type { RateLimitOptions, RuleSpec } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';

/** The framework a test server runs on. */
export type Framework = 'fastify' | 'express' | 'koa';

/** Every framework the client is tested against. */
export const FRAMEWORKS: readonly Framework[] = ['fastify', 'express', 'koa'];

/** A per-IP fixed-window rule: windows start on multiples of `per`, so a test's clock can sit on a boundary. */
export function perIp(requests: number, per: string): RuleSpec {
  return { name: 'per_ip', key: ['ip'], limit: { requests, per }, algorithm: 'fixed_window' };
}

/** The limiter options the tests set: the same type whatever the framework. */
export type LimiterSetup = Pick<
  RateLimitOptions<unknown>,
  | 'rules'
  | 'store'
  | 'clock'
  | 'headers'
  | 'lists'
  | 'retryHeader'
  | 'addressDescriptors'
  | 'logger'
  | 'decisionLog'
  | 'observer'
  | 'challenge'
> & {
  /** Trust one proxy hop (the loopback peer) for the client address: Fastify trustProxy, Express and Koa alike. */
  readonly trustProxy?: boolean;
};

/** One request as the server received it. */
export interface Hit {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly attempt: string | undefined;
  /** The `Retry-Attempt` header @sluice/client sends on retries. */
  readonly retry: string | undefined;
  /** Whether it carried a challenge's solution (`Sluice-Solution`) or a pass (`Sluice-Pass`). */
  readonly solution: boolean;
  readonly pass: boolean;
  /** When it arrived (Date.now()). */
  readonly at: number;
}

/** What `POST /orders` answers when the limiter lets it through: the body and key it got. */
export interface OrderEcho {
  readonly body: unknown;
  readonly idempotencyKey: string | null;
}

/** A started server. */
export interface TestServer {
  readonly url: string;
  readonly hits: Hit[];
  close(): Promise<void>;
}

/** Starts `framework` with `GET /items` and `POST /orders` (JSON echo) behind a Sluice limiter. */
export async function startServer(framework: Framework, setup: LimiterSetup): Promise<TestServer> {
  const hits: Hit[] = [];
  const started = await STARTERS[framework](setup);
  // Prepended: logged before the framework (and the limiter) sees the request.
  started.server.prependListener('request', (req: IncomingMessage) => hits.push(hitOf(req)));
  const { port } = started.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: started.close };
}

interface Started {
  readonly server: Server;
  close(): Promise<void>;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

function hitOf(req: IncomingMessage): Hit {
  return {
    method: req.method ?? '',
    path: new URL(req.url ?? '/', 'http://x').pathname,
    idempotencyKey: header(req, 'idempotency-key'),
    attempt: header(req, 'x-attempt'),
    retry: header(req, 'retry-attempt'),
    solution: req.headers['sluice-solution'] !== undefined,
    pass: req.headers['sluice-pass'] !== undefined,
    at: Date.now(),
  };
}

const echo = (body: unknown, key: string | undefined): OrderEcho => ({ body, idempotencyKey: key ?? null });

const STARTERS: Record<Framework, (setup: LimiterSetup) => Promise<Started>> = {
  async fastify({ trustProxy, ...setup }) {
    const app = Fastify({ trustProxy: trustProxy === true ? '127.0.0.1' : false });
    await app.register(fastifyRateLimit, setup);
    app.get('/items', async () => ({ ok: true }));
    app.post('/orders', async (request) => echo(request.body, header(request.raw, 'idempotency-key')));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { server: app.server, close: () => app.close() };
  },

  async express({ trustProxy, ...setup }) {
    const app = express();
    if (trustProxy === true) app.set('trust proxy', 1);
    app.use(expressRateLimit(setup));
    app.use(express.json());
    app.get('/items', (_req, res) => {
      res.json({ ok: true });
    });
    app.post('/orders', (req, res) => {
      res.json(echo(req.body, header(req, 'idempotency-key')));
    });
    return listen(createServer(app));
  },

  async koa({ trustProxy, ...setup }) {
    const app = new Koa({ proxy: trustProxy === true, maxIpsCount: 1 });
    app.silent = true;
    app.use(koaRateLimit(setup));
    const router = new Router();
    router.get('/items', (ctx) => {
      ctx.body = { ok: true };
    });
    router.post('/orders', async (ctx) => {
      ctx.body = echo(JSON.parse(await readText(ctx.req)), header(ctx.req, 'idempotency-key'));
    });
    app.use(router.routes());
    return listen(createServer(app.callback()));
  },
};

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function listen(server: Server): Promise<Started> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

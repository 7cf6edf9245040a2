import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import {
  type InlineLimit,
  isInlineLimit,
  type Limiter,
  type RateLimitInfo,
  type RateLimitOptions,
  type RuleSpec,
} from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { hono } from './hono-app.js';

/** What each test app's request looks like to the shared option functions (true in all three). */
export interface AnyRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** Holds `/slow` handlers until the test lets them go. */
export class Gate {
  entered = 0;
  #waiting: (() => void)[] = [];

  wait(): Promise<void> {
    this.entered += 1;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  openAll(): void {
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

/** The app every adapter serves, the same routes everywhere. */
export interface AppSpec {
  readonly options: RateLimitOptions<AnyRequest>;
  /** A rule (or the shorthand) for `/limited` only, given the framework's per-route way. */
  readonly routeRule?: RuleSpec | InlineLimit;
  readonly trustProxy?: boolean;
  readonly gate?: Gate;
  /** When set, `onDenied` answers 418 with this text and the rule header, each framework its own way. */
  readonly customDenial?: string;
  /** Counts handler runs, by path. */
  readonly served?: Map<string, number>;
  /** A path an earlier middleware answers (200 `{"early":true}`) before the limiter runs, passing it on. */
  readonly sendsFirst?: string;
  /** Collects errors that reach the framework's error handling. */
  readonly errors?: unknown[];
}

export const EARLY = JSON.stringify({ early: true });

/** What `/info` answers: the limit the handler read, each framework its own typed way. */
export function infoBody(info: RateLimitInfo | undefined) {
  return info
    ? { rule: info.rule ?? null, limit: info.limit, remaining: info.remaining, resetMs: info.resetMs }
    : null;
}

/** A started app: its base URL, its limiter, and how to stop it. */
export interface RunningApp {
  readonly url: string;
  readonly server: Server;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

/** One adapter: a name and how to start the spec's app with it. */
export interface AdapterFactory {
  readonly name: string;
  start(spec: AppSpec): Promise<RunningApp>;
}

export const PLAIN = ['/search', '/limited', '/health', '/critical', '/smooth', '/users/:id'] as const;

export async function handle(spec: AppSpec, path: string): Promise<{ ok: true }> {
  spec.served?.set(path, (spec.served.get(path) ?? 0) + 1);
  if (path === '/boom') throw new Error('boom');
  if (path === '/slow') await spec.gate?.wait();
  return { ok: true };
}

export async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Stops the server, then closes the limiter (and its stores), as Fastify's onClose hook does. */
export async function closeBoth(server: Server, limiter: Limiter): Promise<void> {
  await stop(server);
  await limiter.close();
}

const fastify: AdapterFactory = {
  name: 'fastify',
  async start(spec) {
    const app = Fastify({ trustProxy: spec.trustProxy ?? false });
    const { sendsFirst, errors } = spec;
    if (sendsFirst !== undefined) {
      app.addHook('onRequest', async (request, reply) => {
        if (request.url === sendsFirst) return reply.type('application/json').send(EARLY);
      });
    }
    if (errors !== undefined)
      app.addHook('onError', async (_request, _reply, error) => void errors.push(error));
    await app.register(fastifyRateLimit, {
      ...spec.options,
      ...(spec.customDenial !== undefined
        ? {
            onDenied: (_request, reply, denied) =>
              reply.code(418).header('x-ratelimit-rule', denied.body.rule).send(spec.customDenial),
          }
        : {}),
    });
    for (const path of [...PLAIN, '/slow', '/boom']) {
      const rule = path === '/limited' ? spec.routeRule : undefined;
      const rateLimit = rule === undefined || isInlineLimit(rule) ? rule : { rules: [rule] };
      app.get(path, { config: rateLimit ? { rateLimit } : {} }, () => handle(spec, path));
    }
    app.get('/info', async (request) => infoBody(request.rateLimit));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      server: app.server,
      limiter: app.rateLimiter,
      close: () => app.close(),
    };
  },
};

const expressFactory: AdapterFactory = {
  name: 'express',
  async start(spec) {
    const app = express();
    app.set('trust proxy', spec.trustProxy ?? false);
    const { sendsFirst } = spec;
    if (sendsFirst !== undefined) {
      app.use((req, res, next) => {
        if (req.path === sendsFirst) res.type('application/json').send(EARLY);
        next();
      });
    }
    const limiter = expressRateLimit({
      ...spec.options,
      ...(spec.customDenial !== undefined
        ? {
            onDenied: (_req, res, denied) => {
              res
                .status(418)
                .set('x-ratelimit-rule', denied.body.rule ?? '')
                .send(spec.customDenial);
            },
          }
        : {}),
    });
    app.use(limiter);
    for (const path of [...PLAIN, '/slow', '/boom']) {
      const before = path === '/limited' && spec.routeRule ? [limiter.route(spec.routeRule)] : [];
      app.get(path, ...before, async (_req, res) => {
        const body = await handle(spec, path);
        if (!res.headersSent) res.json(body);
      });
    }
    app.get('/info', (req, res) => {
      res.json(infoBody(req.rateLimit));
    });
    app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      spec.errors?.push(error);
      if (!res.headersSent) res.status(500).json({ error: 'boom' });
    });
    const server = createServer(app);
    const url = await listen(server);
    return { url, server, limiter: limiter.limiter, close: () => closeBoth(server, limiter.limiter) };
  },
};

const koa: AdapterFactory = {
  name: 'koa',
  async start(spec) {
    const app = new Koa();
    app.proxy = spec.trustProxy ?? false;
    app.silent = true;
    app.on('error', (error: unknown) => spec.errors?.push(error));
    const { sendsFirst } = spec;
    if (sendsFirst !== undefined) {
      app.use(async (ctx, next) => {
        if (ctx.path === sendsFirst) {
          ctx.respond = false;
          ctx.res.writeHead(200, { 'content-type': 'application/json' }).end(EARLY);
        }
        await next();
      });
    }
    const limiter = koaRateLimit({
      ...spec.options,
      ...(spec.customDenial !== undefined
        ? {
            onDenied: (ctx, denied) => {
              ctx.status = 418;
              ctx.set('x-ratelimit-rule', denied.body.rule ?? '');
              ctx.body = spec.customDenial;
            },
          }
        : {}),
    });
    const router = new Router();
    app.use(limiter);
    for (const path of [...PLAIN, '/slow', '/boom']) {
      const before = path === '/limited' && spec.routeRule ? [limiter.route(spec.routeRule)] : [];
      router.get(path, ...before, async (ctx) => {
        ctx.body = await handle(spec, path);
      });
    }
    router.get('/info', (ctx) => {
      ctx.body = infoBody(ctx.state.rateLimit);
    });
    app.use(router.routes());
    const server = createServer(app.callback());
    const url = await listen(server);
    return { url, server, limiter: limiter.limiter, close: () => closeBoth(server, limiter.limiter) };
  },
};

/** Every adapter the contract suite runs against. */
export const adapters: readonly AdapterFactory[] = [fastify, expressFactory, koa, hono];

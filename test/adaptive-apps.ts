/**
 * A small backend behind each adapter for the adaptive tests: GET /pay answers what `backend.status()` says
 * (the backend's health), counting the requests that reach it. Real HTTP on a loopback port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import type { Limiter, RuleSpec } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';

/** The backend behind the limiter: its health, and the requests that reached it. */
export interface Backend {
  /** The status of the next response. */
  status: () => number;
  /** Called as each request is served: a slow backend moves the test's clock on here. */
  work?: () => void;
  served: number;
}

/** What every app is started with. */
export interface AppSetup {
  readonly rules: readonly RuleSpec[];
  readonly backend: Backend;
  readonly clock: () => number;
  readonly store?: Store;
}

/** A started app. */
export interface StartedApp {
  readonly url: string;
  readonly limiter: Limiter;
  close(): Promise<void>;
}

export type Framework = 'express' | 'koa' | 'fastify';

/** The request's priority class comes from a header, as an app's descriptors hook would set it. */
function tierOf(header: string | string[] | undefined): Record<string, string> {
  return typeof header === 'string' ? { tier: header } : {};
}

function options(setup: AppSetup) {
  return {
    rules: { rules: setup.rules },
    clock: setup.clock,
    ...(setup.store === undefined ? {} : { store: setup.store }),
  };
}

/** Answers one request to the backend. */
function serve(backend: Backend): number {
  backend.served++;
  backend.work?.();
  return backend.status();
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closed(server: Server, limiter: Limiter): () => Promise<void> {
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await limiter.close();
  };
}

/** Starts the backend behind one framework's adapter. */
export async function startApp(framework: Framework, setup: AppSetup): Promise<StartedApp> {
  const { backend } = setup;
  if (framework === 'express') {
    const app = express();
    const limiter = expressRateLimit({
      ...options(setup),
      descriptors: (req) => tierOf(req.headers['x-tier']),
    });
    app.use(limiter);
    app.get('/pay', (_req, res) => {
      res.status(serve(backend)).send('paid');
    });
    const server = createServer(app);
    return { url: await listening(server), limiter: limiter.limiter, close: closed(server, limiter.limiter) };
  }
  if (framework === 'koa') {
    const app = new Koa();
    app.silent = true;
    const limiter = koaRateLimit({
      ...options(setup),
      descriptors: (ctx) => tierOf(ctx.get('x-tier') || undefined),
    });
    const router = new Router();
    router.get('/pay', (ctx) => {
      ctx.status = serve(backend);
      ctx.body = 'paid';
    });
    app.use(limiter);
    app.use(router.routes());
    const server = createServer(app.callback());
    return { url: await listening(server), limiter: limiter.limiter, close: closed(server, limiter.limiter) };
  }
  const app = Fastify();
  await app.register(fastifyRateLimit, {
    ...options(setup),
    descriptors: (request) => tierOf(request.headers['x-tier']),
  });
  app.get('/pay', (_request, reply) => reply.code(serve(backend)).send('paid'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, limiter: app.rateLimiter, close: () => app.close() };
}

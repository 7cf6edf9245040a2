import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { isInlineLimit } from '@sluice/core/http';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { type AdapterFactory, closeBoth, EARLY, handle, infoBody, listen, PLAIN } from './app-spec.js';
import { hono } from './hono-app.js';
import { nestAdapters } from './nest-app.js';

export * from './app-spec.js';

const fastify: AdapterFactory = {
  name: 'fastify',
  traits: { routeShorthandName: 'get_limited' },
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
    const { batchCost } = spec;
    await app.register(fastifyRateLimit, {
      ...spec.options,
      ...(batchCost !== undefined ? { cost: (request) => batchCost(request.body) } : {}),
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
    if (spec.batchRule !== undefined)
      app.post('/batch', { config: { rateLimit: { rules: [spec.batchRule], afterBody: true } } }, () => ({
        ok: true,
      }));
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
  traits: { routeShorthandName: 'route_1' },
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
    const { batchCost } = spec;
    const limiter = expressRateLimit({
      ...spec.options,
      ...(batchCost !== undefined ? { cost: (req) => batchCost(req.body) } : {}),
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
    if (spec.batchRule !== undefined)
      app.post('/batch', express.json(), limiter.route(spec.batchRule, { afterBody: true }), (_req, res) => {
        res.json({ ok: true });
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
  traits: { routeShorthandName: 'route_1' },
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
    const { batchCost } = spec;
    const limiter = koaRateLimit({
      ...spec.options,
      ...(batchCost !== undefined ? { cost: (ctx) => batchCost(bodyOf(ctx)) } : {}),
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
    if (spec.batchRule !== undefined)
      router.post('/batch', jsonBody, limiter.route(spec.batchRule, { afterBody: true }), (ctx) => {
        ctx.body = { ok: true };
      });
    app.use(router.routes());
    const server = createServer(app.callback());
    const url = await listen(server);
    return { url, server, limiter: limiter.limiter, close: () => closeBoth(server, limiter.limiter) };
  },
};

/** The body a Koa body parser left on the request. */
const bodyOf = (ctx: Koa.Context): unknown => (ctx.request as { body?: unknown }).body;

/** A JSON body parser for Koa (as @koa/bodyparser does): the parsed body on `ctx.request.body`. */
async function jsonBody(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  (ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  await next();
}

/** Every adapter the contract suite runs against. */
export const adapters: readonly AdapterFactory[] = [fastify, expressFactory, koa, hono, ...nestAdapters];

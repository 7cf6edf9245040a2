import type { IncomingMessage, Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { RateLimitOptions } from '@sluice/core';
import { type HonoRateLimitOptions, rateLimit } from '@sluice/hono';
import { type Context, Hono } from 'hono';
import {
  type AdapterFactory,
  type AnyRequest,
  type AppSpec,
  closeBoth,
  EARLY,
  handle,
  infoBody,
  listen,
  PLAIN,
} from './app-spec.js';

/** The Node request under a Hono context: what the shared option functions of the test apps read. */
const nodeRequest = (c: Context): AnyRequest =>
  (c.env as { incoming: IncomingMessage }).incoming as AnyRequest;

/** The spec's options, their functions handed the Node request as in the other adapters' apps. */
function honoOptions(spec: AppSpec): HonoRateLimitOptions {
  const { descriptors, apiKey, validateApiKey, cost, skip, ...rest } =
    spec.options as RateLimitOptions<AnyRequest>;
  return {
    ...rest,
    ...(descriptors ? { descriptors: (c: Context) => descriptors(nodeRequest(c)) } : {}),
    ...(apiKey ? { apiKey: (c: Context) => apiKey(nodeRequest(c)) } : {}),
    ...(validateApiKey
      ? { validateApiKey: (key: string, c: Context) => validateApiKey(key, nodeRequest(c)) }
      : {}),
    ...(cost ? { cost: (c: Context) => cost(nodeRequest(c)) } : {}),
    ...(spec.batchCost ? { cost: bodyCost(spec.batchCost) } : {}),
    ...(skip ? { skip: (c: Context) => skip(nodeRequest(c)) } : {}),
    trustProxy: spec.trustProxy ?? false,
    ...(spec.customDenial !== undefined
      ? {
          onDenied: (c: Context, denied) =>
            c.text(spec.customDenial ?? '', 418, { 'x-ratelimit-rule': denied.body.rule ?? '' }),
        }
      : {}),
  };
}

/** `batchCost` over the JSON body Hono parses (and keeps for the handler); a request without one costs the rule's. */
function bodyCost(batchCost: (body: unknown) => number | undefined) {
  return async (c: Context) => (c.req.method === 'POST' ? batchCost(await c.req.json()) : undefined);
}

/** The contract app on Hono, served by @hono/node-server. */
export const hono: AdapterFactory = {
  name: 'hono',
  traits: { routeShorthandName: 'route_1' },
  async start(spec) {
    const app = new Hono();
    const { sendsFirst } = spec;
    if (sendsFirst !== undefined) {
      // Hono's way of answering early and passing on: the response set first stands (c.finalized).
      app.use(async (c, next) => {
        if (c.req.path === sendsFirst)
          c.res = new Response(EARLY, { headers: { 'content-type': 'application/json' } });
        await next();
      });
    }
    app.onError((error, c) => {
      spec.errors?.push(error);
      return c.json({ error: 'boom' }, 500);
    });
    const limiter = rateLimit(honoOptions(spec));
    app.use(limiter);
    for (const path of [...PLAIN, '/slow', '/boom']) {
      const handler = async (c: Context) => c.json(await handle(spec, path));
      if (path === '/limited' && spec.routeRule) app.get(path, limiter.route(spec.routeRule), handler);
      else app.get(path, handler);
    }
    app.get('/info', (c) => c.json(infoBody(c.get('rateLimit'))));
    if (spec.batchRule !== undefined)
      app.post('/batch', limiter.route(spec.batchRule, { afterBody: true }), async (c) => {
        await c.req.json(); // the handler reads the body the cost hook read
        return c.json({ ok: true });
      });
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    const url = await listen(server);
    return { url, server, limiter: limiter.limiter, close: () => closeBoth(server, limiter.limiter) };
  },
};

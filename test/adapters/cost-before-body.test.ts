/**
 * Issue 40, cost before the body: a route priced by `cost(req)` from its body, decided before the body is
 * parsed (no `afterBody`), was charged the rule's cost (1) for a batch of 100, silently. Over real HTTP on
 * Express, Koa and Fastify: without `afterBody` the notice SLUICE_COST_BEFORE_BODY is logged once, naming
 * afterBody (and not for a request without a body); with `afterBody: true` no notice and the batch is charged
 * its 100 operations.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import type { RateLimitInfo, RuleSpec } from '@sluice/core';
import { rateLimit as expressRateLimit } from '@sluice/express';
import { rateLimit as fastifyRateLimit } from '@sluice/fastify';
import { rateLimit as koaRateLimit } from '@sluice/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { closeBoth, listen } from './app-spec.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const BATCH: RuleSpec = { name: 'batch_ops', key: ['ip'], limit: { requests: 1000, per: '1m' } };
const GLOBAL = { rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 100_000, per: '1m' } }] };
const CODE = 'SLUICE_COST_BEFORE_BODY';

/** The operations of a batch body, as an app's cost function reads them: undefined when there is no body. */
const opsOf = (body: unknown): number | undefined => (body as { ops?: unknown[] } | undefined)?.ops?.length;
/** What the handler answers: the batch rule's remaining after this request. */
const left = (info: RateLimitInfo | undefined) => ({
  remaining: info?.decision.results.find((r) => r.rule === 'batch_ops')?.remaining,
});

interface Running {
  readonly url: string;
  readonly warnings: string[];
  close(): Promise<void>;
}

/** Each framework's app: a global limiter, and POST /batch with a JSON body parser and the batch rule. */
const FRAMEWORKS: Record<string, (afterBody: boolean) => Promise<Running>> = {
  async express(afterBody) {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message) };
    const limiter = expressRateLimit({
      rules: GLOBAL,
      clock: () => T0,
      logger,
      cost: (req) => opsOf(req.body),
    });
    const app = express();
    app.use(limiter);
    app.post('/batch', express.json(), limiter.route(BATCH, { afterBody }), (req, res) => {
      res.json(left(req.rateLimit));
    });
    app.get('/plain', (req, res) => void res.json(left(req.rateLimit)));
    const server = createServer(app);
    return { url: await listen(server), warnings, close: () => closeBoth(server, limiter.limiter) };
  },
  async koa(afterBody) {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message) };
    const limiter = koaRateLimit({
      rules: GLOBAL,
      clock: () => T0,
      logger,
      cost: (ctx) => opsOf((ctx.request as { body?: unknown }).body),
    });
    const app = new Koa();
    const router = new Router();
    app.use(limiter);
    router.post('/batch', jsonBody, limiter.route(BATCH, { afterBody }), (ctx) => {
      ctx.body = left(ctx.state.rateLimit as RateLimitInfo);
    });
    router.get('/plain', (ctx) => {
      ctx.body = left(ctx.state.rateLimit as RateLimitInfo);
    });
    app.use(router.routes());
    const server = createServer(app.callback());
    return { url: await listen(server), warnings, close: () => closeBoth(server, limiter.limiter) };
  },
  async fastify(afterBody) {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message) };
    const app = Fastify();
    await app.register(fastifyRateLimit, {
      rules: GLOBAL,
      clock: () => T0,
      logger,
      cost: (request) => opsOf(request.body),
    });
    app.post('/batch', { config: { rateLimit: { rules: [BATCH], afterBody } } }, async (request) =>
      left(request.rateLimit),
    );
    app.get('/plain', async (request) => left(request.rateLimit));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, warnings, close: () => app.close() };
  },
};

/** A JSON body parser for Koa (as @koa/bodyparser does): the parsed body on `ctx.request.body`. */
async function jsonBody(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  (ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  await next();
}

/** POSTs a batch of `n` operations; the batch rule's remaining the handler saw. */
async function batch(url: string, n: number): Promise<number | undefined> {
  const ops = Array.from({ length: n }, (_, id) => ({ id }));
  const res = await fetch(`${url}/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ops }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { remaining?: number }).remaining;
}

const noticed = (warnings: readonly string[]) => warnings.filter((line) => line.includes(`[${CODE}]`));

for (const [framework, start] of Object.entries(FRAMEWORKS)) {
  describe(`cost from the body on ${framework}`, () => {
    let running: Running | undefined;
    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    it('without afterBody: a batch is charged 1, and a notice naming afterBody is logged once', async () => {
      running = await start(false);
      const { url, warnings } = running;
      // A request without a body gives no cost either: no notice for it.
      expect((await fetch(`${url}/plain`)).status).toBe(200);
      expect(noticed(warnings)).toEqual([]);
      expect(await batch(url, 100)).toBe(999);
      expect(await batch(url, 100)).toBe(998);
      const lines = noticed(warnings);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('afterBody: true');
      expect(lines[0]).toContain('cost(req) on POST');
    });

    it('with afterBody: true the batch is charged its operations, and nothing is noticed', async () => {
      running = await start(true);
      expect(await batch(running.url, 100)).toBe(900);
      expect(await batch(running.url, 100)).toBe(800);
      expect(noticed(running.warnings)).toEqual([]);
    });
  });
}

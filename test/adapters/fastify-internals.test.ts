import { fastifyRouteConfig } from '@sluice/fastify/facts';
import Fastify from 'fastify';
import request from 'supertest';
import { describe, expect, it } from 'vitest';

// @sluice/fastify reads a request's route config from Fastify's route context, not `routeOptions` (which Fastify
// builds anew on every read). These tests hold that read to the public one on the Fastify version installed.

describe('Fastify internals @sluice/fastify reads', () => {
  it("finds each request's route config as routeOptions gives it, through the route context", async () => {
    const app = Fastify();
    const seen: { same: boolean; context: boolean; url: unknown }[] = [];
    app.addHook('onRequest', async (req) => {
      const context = Object.getOwnPropertySymbols(req).some((s) => s.description === 'fastify.context');
      const config = fastifyRouteConfig(req);
      seen.push({ same: config === req.routeOptions.config, context, url: config?.url });
    });
    app.get('/users/:id', { config: { rateLimit: { limit: 5, per: '1m' } } }, async () => 'ok');
    app.post('/plain', async () => 'ok');
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      await request(url).get('/users/7').expect(200);
      await request(url).post('/plain').expect(200);
      await request(url).get('/nowhere').expect(404);
    } finally {
      await app.close();
    }
    expect(seen).toEqual([
      { same: true, context: true, url: '/users/:id' },
      { same: true, context: true, url: '/plain' },
      { same: true, context: true, url: undefined },
    ]);
  });

  it('falls back to routeOptions for a request without a route context, or a context without a config', async () => {
    const config = { rateLimit: false };
    expect(fastifyRouteConfig({ routeOptions: { config } })).toBe(config);
    expect(fastifyRouteConfig({ routeOptions: {} })).toBeUndefined();
    const app = Fastify();
    let key: symbol | undefined;
    app.get('/', async (req) => {
      key = Object.getOwnPropertySymbols(req).find((s) => s.description === 'fastify.context');
      return 'ok';
    });
    await app.inject('/');
    await app.close();
    expect(key).toBeDefined();
    expect(fastifyRouteConfig({ [key!]: {}, routeOptions: { config } } as never)).toBe(config);
  });
});

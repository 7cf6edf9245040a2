import { once } from 'node:events';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { type AdapterStage, ConfigError, type RuleSpec } from '@sluice/core';
import { type Context, Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type HonoRateLimit, type HonoRateLimitOptions, rateLimit } from './index.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const quiet = { warn: () => {} };
const perIp = (requests: number): RuleSpec => ({
  name: 'per_ip',
  key: ['ip'],
  limit: { requests, per: '60s' },
});
const rules = (...list: RuleSpec[]) => ({ domain: 'test', rules: list });

let server: Server | undefined;
let limiter: HonoRateLimit | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await limiter?.limiter.close();
  server = undefined;
  limiter = undefined;
});

/** Serves `app` on a free loopback port; `nodeBindings: false` serves it as a runtime without Node's would. */
async function serve(app: Hono, nodeBindings = true): Promise<string> {
  server = createAdaptorServer({
    fetch: nodeBindings ? app.fetch : (request: Request) => app.fetch(request),
  }) as Server;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A Hono app limited by `options` (clock fixed, notices silent), its routes added by `routes`. */
function limitedApp(options: HonoRateLimitOptions, routes: (app: Hono, limit: HonoRateLimit) => void): Hono {
  const app = new Hono();
  limiter = rateLimit({ clock: () => T0, logger: quiet, ...options });
  app.use(limiter);
  routes(app, limiter);
  return app;
}

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

describe('@sluice/hono', () => {
  it('puts the RateLimit fields on a Response the handler builds itself, as on c.json()', async () => {
    const app = limitedApp({ rules: rules(perIp(5)) }, (app) => {
      app.get('/raw', () => new Response('raw', { headers: { 'content-type': 'text/plain' } }));
      app.get('/json', (c) => c.json({ ok: true }));
    });
    const url = await serve(app);
    const raw = await get(`${url}/raw`);
    expect(await raw.text()).toBe('raw');
    expect(raw.headers.get('content-type')).toBe('text/plain');
    expect(raw.headers.get('ratelimit')).toMatch(/^"per_ip";r=4;t=\d+$/);
    expect((await get(`${url}/json`)).headers.get('ratelimit')).toMatch(/^"per_ip";r=3;t=\d+$/);
  });

  it("keys limiter.route() rules by Hono's route template", async () => {
    const byRoute: RuleSpec = { name: 'per_route', key: ['route'], limit: { requests: 2, per: '60s' } };
    const app = limitedApp({ rules: rules(perIp(100)) }, (app, limit) => {
      app.get('/users/:id', limit.route(byRoute), (c) => c.json({ id: c.req.param('id') }));
    });
    const url = await serve(app);
    await get(`${url}/users/1`);
    const second = await get(`${url}/users/2`);
    expect(second.status).toBe(200);
    const third = await get(`${url}/users/3`);
    expect(third.status).toBe(429);
    expect(third.headers.get('x-ratelimit-rule')).toBe('per_route');
    // The denying rule's fields, not those the global middleware had set for the same response.
    expect(third.headers.get('ratelimit-policy')).toBe('"per_route";q=2;w=60');
    expect(third.headers.get('ratelimit')).toMatch(/^"per_route";r=0;/);
  });

  it("checks a route's rules with the global ones in one call: a route denial consumes no global count", async () => {
    const app = limitedApp({ rules: rules(perIp(5)) }, (app, limit) => {
      app.get('/x', limit.route({ limit: 1, per: '1m', name: 'x_once' }), (c) => c.text('ok'));
      app.get('/y', (c) => c.text('ok'));
    });
    const url = await serve(app);
    expect((await get(`${url}/x`)).status).toBe(200);
    expect((await get(`${url}/x`)).headers.get('x-ratelimit-rule')).toBe('x_once');
    expect((await get(`${url}/y`)).headers.get('ratelimit')).toMatch(/^"per_ip";r=3;/);
  });

  it('takes the inline shorthand globally and per route', async () => {
    const app = limitedApp({ limit: 3, per: '1m' }, (app, limit) => {
      app.get('/search', (c) => c.text('ok'));
      app.get('/login', limit.route({ limit: 1, per: '1m', name: 'login' }), (c) => c.text('ok'));
    });
    const url = await serve(app);
    expect((await get(`${url}/login`)).status).toBe(200);
    const denied = await get(`${url}/login`);
    expect(denied.status).toBe(429);
    expect(denied.headers.get('x-ratelimit-rule')).toBe('login');
    // The denied /login consumed nothing of the global shorthand: two more requests fit in its 3.
    expect((await get(`${url}/search`)).status).toBe(200);
    expect((await get(`${url}/search`)).status).toBe(200);
    expect((await get(`${url}/search`)).status).toBe(429);
  });

  describe('trustProxy', () => {
    const from = (url: string, forwardedFor: string) => get(`${url}/`, { 'x-forwarded-for': forwardedFor });

    it('with a hop count, keys by the entry the trusted proxy wrote, not the one the client wrote', async () => {
      const app = limitedApp({ rules: rules(perIp(1)), trustProxy: 1 }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app);
      expect((await from(url, '1.1.1.1, 198.51.100.1')).status).toBe(200);
      expect((await from(url, '2.2.2.2, 198.51.100.1')).status).toBe(429); // spoofed leftmost: same client
      expect((await from(url, '198.51.100.2')).status).toBe(200);
    });

    it('with proxy addresses, walks past them to the client', async () => {
      const app = limitedApp({ rules: rules(perIp(1)), trustProxy: ['127.0.0.0/8', '10.0.0.0/8'] }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app);
      expect((await from(url, '1.1.1.1, 198.51.100.1, 10.0.0.7')).status).toBe(200);
      expect((await from(url, '198.51.100.1')).status).toBe(429);
      expect((await from(url, '198.51.100.2, 10.0.0.7')).status).toBe(200);
    });

    it.each([
      ['a string', '127.0.0.1, 10.0.0.0/8'],
      ['a named range', 'loopback,uniquelocal'],
      ['a function', (address: string) => address === '127.0.0.1' || address.startsWith('10.')],
    ] as const)(
      'takes the Express forms: %s, walking past the proxies to the client',
      async (_form, trustProxy) => {
        const app = limitedApp({ rules: rules(perIp(1)), trustProxy }, (app) =>
          app.get('/', (c) => c.text('ok')),
        );
        const url = await serve(app);
        expect((await from(url, '1.1.1.1, 198.51.100.1, 10.0.0.7')).status).toBe(200);
        expect((await from(url, '198.51.100.1')).status).toBe(429);
        expect((await from(url, '198.51.100.2, 10.0.0.7')).status).toBe(200);
      },
    );

    it("takes '127.0.0.1' as Express does: the loopback peer trusted, the entry it wrote is the client", async () => {
      const app = limitedApp({ rules: rules(perIp(1)), trustProxy: '127.0.0.1' }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app);
      expect((await from(url, '10.0.0.7')).status).toBe(200);
      // 10.0.0.7 is not trusted here: it is the client, whatever it wrote to its left.
      expect((await from(url, '1.1.1.1, 10.0.0.7')).status).toBe(429);
    });

    it('without it, keys by the socket and gives a notice when X-Forwarded-For arrives', async () => {
      const warn = vi.fn();
      const app = limitedApp({ rules: rules(perIp(1)), logger: { warn } }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app);
      expect((await from(url, '198.51.100.1')).status).toBe(200);
      expect((await from(url, '198.51.100.2')).status).toBe(429);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/\[SLUICE_XFF_UNTRUSTED\]$/);
    });
  });

  describe('on a runtime without Node bindings', () => {
    const oneAtATime = rules({
      name: 'one_at_a_time',
      key: [],
      global: true,
      algorithm: 'concurrency',
      limit: { concurrent: 1 },
    });
    // The client address comes from getConnInfo: here a header, as an edge runtime would hand it over.
    const getConnInfo = (c: Context) => ({ remote: { address: c.req.header('x-peer') ?? '192.0.2.1' } });

    it('takes the client address from getConnInfo', async () => {
      const app = limitedApp({ rules: rules(perIp(1)), getConnInfo }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app, false);
      expect((await get(url, { 'x-peer': '198.51.100.1' })).status).toBe(200);
      expect((await get(url, { 'x-peer': '198.51.100.1' })).status).toBe(429);
      expect((await get(url, { 'x-peer': '198.51.100.2' })).status).toBe(200);
    });

    it('gives a lease back once the response is made', async () => {
      const app = limitedApp({ rules: oneAtATime, getConnInfo }, (app) => app.get('/', (c) => c.text('ok')));
      const url = await serve(app, false);
      for (let i = 0; i < 3; i++) expect((await get(url)).status).toBe(200);
    });

    it('gives a lease back when the client aborts, while the handler still runs', async () => {
      let entered = 0;
      let openGate: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        openGate = resolve;
      });
      const app = limitedApp({ rules: oneAtATime, getConnInfo }, (app) =>
        app.get('/', async (c) => {
          entered += 1;
          if (entered === 1) await gate;
          return c.text('ok');
        }),
      );
      const url = await serve(app, false);
      await new Promise<void>((resolve) => {
        const req = httpRequest(url);
        req.on('error', () => resolve());
        req.on('close', () => resolve());
        req.end();
        const poll = setInterval(() => {
          if (entered === 0) return;
          clearInterval(poll);
          req.destroy();
        }, 5);
      });
      await vi.waitFor(async () => expect((await get(url)).status).toBe(200));
      openGate();
    });
  });

  describe('onDenied', () => {
    async function denied(onDenied: HonoRateLimitOptions['onDenied'], stages: AdapterStage[] = []) {
      const observer = { onAdapterError: (_error: Error, stage: AdapterStage) => void stages.push(stage) };
      const app = limitedApp({ rules: rules(perIp(1)), onDenied, observer }, (app) =>
        app.get('/', (c) => c.text('ok')),
      );
      const url = await serve(app);
      await get(url);
      return get(url);
    }

    it('may set c.res instead of returning a Response', async () => {
      const response = await denied(async (c) => {
        c.res = new Response('busy', { status: 418 });
        return undefined;
      });
      expect(response.status).toBe(418);
      expect(await response.text()).toBe('busy');
    });

    it("keeps the headers of its own Response over the global middleware's", async () => {
      const app = new Hono();
      limiter = rateLimit({
        clock: () => T0,
        logger: quiet,
        rules: rules(perIp(10)),
        onDenied: () => new Response('wait', { status: 429, headers: { 'retry-after': '99' } }),
      });
      app.use(limiter);
      app.get('/', limiter.route({ limit: 1, per: '1m', name: 'one' }), (c) => c.text('ok'));
      const url = await serve(app);
      await get(url);
      const response = await get(url);
      expect(await response.text()).toBe('wait');
      expect(response.headers.get('retry-after')).toBe('99');
    });

    it('falls back to the default 429 when it gives no response', async () => {
      expect((await denied(() => undefined)).status).toBe(429);
    });

    it('falls back to the default 429 when it throws, and tells the observer', async () => {
      const stages: AdapterStage[] = [];
      const thrown = await denied(() => {
        throw new Error('bug in onDenied');
      }, stages);
      expect(thrown.status).toBe(429);
      expect(await thrown.json()).toMatchObject({ error: 'rate_limited', rule: 'per_ip' });
      expect(stages).toEqual(['on_denied']);
    });
  });

  it('counts but never denies with dryRun', async () => {
    const app = limitedApp({ rules: rules(perIp(1)), dryRun: true }, (app) =>
      app.get('/', (c) => c.text('ok')),
    );
    const url = await serve(app);
    for (let i = 0; i < 3; i++) expect((await get(url)).status).toBe(200);
  });

  it('hands the context to validateApiKey, and an invalid key counts as anonymous', async () => {
    const paths: string[] = [];
    const app = limitedApp(
      {
        rules: rules(
          { name: 'anon', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 1, per: '60s' } },
          { name: 'keyed', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 5, per: '60s' } },
        ),
        validateApiKey: (key, c) => {
          paths.push(c.req.path);
          return key === 'k_real';
        },
      },
      (app) => app.get('/x', (c) => c.text('ok')),
    );
    const url = await serve(app);
    expect((await get(`${url}/x`, { 'x-api-key': 'k_made_up' })).status).toBe(200);
    expect((await get(`${url}/x`, { 'x-api-key': 'k_other' })).status).toBe(429);
    expect((await get(`${url}/x`, { 'x-api-key': 'k_real' })).headers.get('ratelimit')).toMatch(
      /^"keyed";r=4;/,
    );
    expect(paths).toEqual(['/x', '/x', '/x']);
  });

  it('refuses wrong options at start with a ConfigError saying which', () => {
    expect(() => rateLimit({ windowMs: 1000 } as never)).toThrow(
      /unknown option "windowMs" \(did you mean "per"\?/,
    );
    expect(() => rateLimit({ trustProxy: -1, logger: quiet })).toThrow(ConfigError);
    expect(() => rateLimit({ trustProxy: ['not a proxy'], logger: quiet })).toThrow(/option "trustProxy"/);
    expect(() => rateLimit({ trustProxy: '127.0.0.1, nonsense', logger: quiet })).toThrow(
      /option "trustProxy"/,
    );
    expect(() => rateLimit({ getConnInfo: 'node' as never, logger: quiet })).toThrow(
      /option "getConnInfo": must be a function/,
    );
  });
});

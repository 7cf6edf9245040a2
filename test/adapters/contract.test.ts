import { request as httpRequest } from 'node:http';
import {
  type AdapterObserver,
  type AdapterStage,
  type Check,
  type CheckResult,
  compileRules,
  type Lease,
  MemoryStore,
  type Store,
} from '@sluice/core';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AdapterFactory,
  type AnyRequest,
  type AppSpec,
  adapters,
  Gate,
  itUnlessSkipped,
  type RunningApp,
} from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

/** A MemoryStore that counts how often each lease is given back. */
class CountingStore implements Store {
  readonly inner = new MemoryStore();
  readonly released = new Map<string, number>();

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return this.inner.evaluate(checks, now);
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    for (const lease of leases) this.released.set(lease.id, (this.released.get(lease.id) ?? 0) + 1);
    return this.inner.release(leases, now);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A store whose every call fails, as a Redis outage looks to the engine. */
const downStore: Store = {
  evaluate: () => Promise.reject(new Error('store down')),
  release: () => Promise.reject(new Error('store down')),
  close: () => Promise.resolve(),
};

/** Sends a GET and drops the connection once the handler has it; resolves when the socket is gone. */
function abortedGet(url: string, until: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(url);
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end();
    const poll = setInterval(() => {
      if (!until()) return;
      clearInterval(poll);
      req.destroy();
    }, 5);
  });
}

/** The framework whose proxy setting an adapter's notices name (Nest's are its platform's). */
const FRAMEWORK_OF: Readonly<Record<string, string>> = {
  fastify: 'Fastify',
  express: 'Express',
  koa: 'Koa',
  'nestjs-express': 'Express',
  'nestjs-fastify': 'Fastify',
};

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'adapter contract: %s',
  (_name, adapter: AdapterFactory) => {
    let running: RunningApp | undefined;
    let now = T0;
    const clock = () => now;

    afterEach(async () => {
      await running?.close();
      running = undefined;
      now = T0;
    });

    async function start(spec: Partial<AppSpec> & { options: AppSpec['options'] }): Promise<RunningApp> {
      running = await adapter.start({
        ...spec,
        options: { clock, logger: { warn: () => {} }, ...spec.options },
      });
      return running;
    }

    it('allows, then denies with 429, Retry-After, the rule, the RateLimit fields and a JSON body', async () => {
      const app = await start({ options: { rules: rules(perIp(2, { algorithm: 'sliding_log' })) } });
      const first = await request(app.url).get('/search').expect(200);
      expect(first.headers['ratelimit-policy']).toBe('"per_ip";q=2;w=60');
      expect(first.headers.ratelimit).toBe('"per_ip";r=1;t=60');
      await request(app.url).get('/search').expect(200);
      const denied = await request(app.url).get('/search').expect(429);
      expect(denied.headers['retry-after']).toBe('60');
      expect(denied.headers['x-ratelimit-rule']).toBe('per_ip');
      expect(denied.headers['ratelimit-policy']).toBe('"per_ip";q=2;w=60');
      expect(denied.headers.ratelimit).toBe('"per_ip";r=0;t=60');
      expect(denied.headers['content-type']).toMatch(/^application\/json/);
      expect(denied.headers['cache-control']).toBe('no-store');
      expect(denied.body).toEqual({ error: 'rate_limited', rule: 'per_ip', retryAfter: 60 });
    });

    it('sends legacy headers when asked, and none when asked', async () => {
      const app = await start({
        options: { rules: rules(perIp(1, { algorithm: 'sliding_log' })), headers: 'legacy' },
      });
      const ok = await request(app.url).get('/search').expect(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('1');
      expect(ok.headers['x-ratelimit-remaining']).toBe('0');
      // The window's reset as a Unix time in seconds, as express-rate-limit's legacy headers and GitHub send it.
      expect(ok.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 60));
      expect(ok.headers.ratelimit).toBeUndefined();
      await app.close();
      const quiet = await start({ options: { rules: rules(perIp(1)), headers: 'none' } });
      const response = await request(quiet.url).get('/search').expect(200);
      expect(response.headers.ratelimit).toBeUndefined();
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    });

    it('lets onDenied send its own denial', async () => {
      const app = await start({ customDenial: 'slow down', options: { rules: rules(perIp(1)) } });
      await request(app.url).get('/search').expect(200);
      const denied = await request(app.url).get('/search').expect(418);
      expect(denied.text).toBe('slow down');
      expect(denied.headers['x-ratelimit-rule']).toBe('per_ip');
    });

    it('lets a client that waits Retry-After through, and not one that waits less', async () => {
      const app = await start({ options: { rules: rules(perIp(1, { algorithm: 'sliding_log' })) } });
      await request(app.url).get('/search').expect(200);
      const denied = await request(app.url).get('/search').expect(429);
      const waitMs = Number(denied.headers['retry-after']) * 1000;
      now = T0 + waitMs - 1;
      await request(app.url).get('/search').expect(429);
      now = T0 + waitMs;
      await request(app.url).get('/search').expect(200);
    });

    it('applies an override instead of the rule it overrides', async () => {
      const tenant = (req: AnyRequest) => ({ tenant: req.headers['x-tenant'] as string | undefined });
      const app = await start({
        options: {
          descriptors: tenant,
          rules: rules(
            {
              name: 'key_default',
              match: { auth: 'api_key' },
              key: ['api_key'],
              limit: { requests: 2, per: '60s' },
            },
            {
              name: 'key_override_acme',
              match: { auth: 'api_key', tenant: 'acme' },
              key: ['api_key'],
              limit: { requests: 4, per: '60s' },
              overrides: 'key_default',
            },
          ),
        },
      });
      const acme = () => request(app.url).get('/search').set('x-api-key', 'k_acme').set('x-tenant', 'acme');
      for (let i = 0; i < 4; i++) await acme().expect(200);
      expect((await acme().expect(429)).headers['x-ratelimit-rule']).toBe('key_override_acme');
      const other = () => request(app.url).get('/search').set('x-api-key', 'k_other');
      await other().expect(200);
      await other().expect(200);
      expect((await other().expect(429)).headers['x-ratelimit-rule']).toBe('key_default');
    });

    it('never denies for a shadow rule', async () => {
      const app = await start({ options: { rules: rules(perIp(1, { mode: 'shadow' })) } });
      for (let i = 0; i < 4; i++) await request(app.url).get('/search').expect(200);
    });

    it('does not limit skipped requests', async () => {
      const app = await start({
        options: { rules: rules(perIp(1)), skip: (req: AnyRequest) => req.url === '/health' },
      });
      for (let i = 0; i < 3; i++) await request(app.url).get('/health').expect(200);
      await request(app.url).get('/search').expect(200);
      await request(app.url).get('/search').expect(429);
    });

    it('applies route-level rules to their route only', async () => {
      const app = await start({
        options: { rules: rules(perIp(100)) },
        routeRule: { name: 'limited_per_ip', key: ['ip'], limit: { requests: 2, per: '60s' } },
      });
      await request(app.url).get('/limited').expect(200);
      await request(app.url).get('/limited').expect(200);
      const denied = await request(app.url).get('/limited').expect(429);
      expect(denied.headers['x-ratelimit-rule']).toBe('limited_per_ip');
      await request(app.url).get('/search').expect(200);
    });

    itUnlessSkipped(adapter, 'unmatchedRoutes')(
      'limits requests no route matches (404s) by the global rules, all under one route value',
      async () => {
        const byRoute = { name: 'per_route', key: ['ip', 'route'], limit: { requests: 2, per: '60s' } };
        const app = await start({ options: { rules: rules(byRoute) } });
        await request(app.url).get('/nowhere').expect(404);
        // A guessed path is no new counter: every 404 has the route `(unmatched)`.
        await request(app.url).get('/elsewhere').expect(404);
        const denied = await request(app.url).get('/guess/3').expect(429);
        expect(denied.headers['x-ratelimit-rule']).toBe('per_route');
        await request(app.url).get('/search').expect(200);
        await app.close();
        const only404s = {
          name: 'scanners',
          match: { route: '(unmatched)' },
          key: ['ip'],
          limit: { requests: 1, per: '60s' },
        };
        const next = await start({ options: { rules: rules(only404s) } });
        await request(next.url).get('/nowhere').expect(404);
        await request(next.url).get('/elsewhere').expect(429);
        await request(next.url).get('/search').expect(200);
        await request(next.url).get('/search').expect(200);
      },
    );

    describe('global rules reading route see the route template', () => {
      const userReads = {
        name: 'user_reads',
        match: { route: '/users/:id' },
        key: ['ip'],
        limit: { requests: 1, per: '60s' },
      };
      const perIpRoute = { name: 'per_ip_route', key: ['ip', 'route'], limit: { requests: 3, per: '60s' } };

      it('applies a rule matching /users/:id to /users/1 and /users/2', async () => {
        const app = await start({ options: { rules: rules(userReads) } });
        await request(app.url).get('/users/1').expect(200);
        const denied = await request(app.url).get('/users/2').expect(429);
        expect(denied.headers['x-ratelimit-rule']).toBe('user_reads');
        await request(app.url).get('/search').expect(200);
      });

      it('counts a rule keyed by [ip, route] once per template, not per path', async () => {
        const app = await start({ options: { rules: rules(perIpRoute) } });
        const first = await request(app.url).get('/users/1').expect(200);
        expect(first.headers.ratelimit).toMatch(/^"per_ip_route";r=2;/);
        // Another id is the same route: it sees the first request's count.
        const second = await request(app.url).get('/users/2').expect(200);
        expect(second.headers.ratelimit).toMatch(/^"per_ip_route";r=1;/);
        await request(app.url).get('/users/3?x=1').expect(200);
        await request(app.url).get('/users/4').expect(429);
        const other = await request(app.url).get('/search').expect(200);
        expect(other.headers.ratelimit).toMatch(/^"per_ip_route";r=2;/);
      });

      it('follows a reload: a new table that starts reading route gets templates at once', async () => {
        const app = await start({ options: { rules: rules(perIp(100)) } });
        await request(app.url).get('/users/1').expect(200);
        app.limiter.setRules(compileRules(rules(perIpRoute)));
        await request(app.url).get('/users/1').expect(200);
        const second = await request(app.url).get('/users/2').expect(200);
        expect(second.headers.ratelimit).toMatch(/^"per_ip_route";r=1;/);
        app.limiter.setRules(compileRules(rules(perIp(2))));
        await request(app.url).get('/users/3').expect(200);
        await request(app.url).get('/users/4').expect(429);
      });
    });

    it('charges a cost read from the parsed body on a route with afterBody, in one all-or-nothing call', async () => {
      const batchCost = (body: unknown) => {
        const ops = (body as { ops?: unknown } | undefined)?.ops;
        return Array.isArray(ops) ? Math.min(ops.length, 50) : undefined;
      };
      const app = await start({
        batchRule: { name: 'batch_ops', key: ['ip'], limit: { requests: 100, per: '60s' } },
        batchCost,
        options: { rules: rules(perIp(1000)) },
      });
      const ops = Array.from({ length: 100 }, (_, id) => ({ op: 'get', id }));
      const batch = () => request(app.url).post('/batch').send({ ops });
      const first = await batch();
      expect(first.status).toBeLessThan(300);
      // A batch of 100 costs min(100, 50): 50 of the route's 100 left, and 950 of per_ip's 1000.
      expect(first.headers.ratelimit).toMatch(/^"batch_ops";r=50;/);
      expect((await batch()).headers.ratelimit).toMatch(/^"batch_ops";r=0;/);
      const denied = await batch().expect(429);
      expect(denied.headers['x-ratelimit-rule']).toBe('batch_ops');
      // The denied batch took nothing from per_ip: 1000 - 50 - 50 - this request's 1.
      const other = await request(app.url).get('/search').expect(200);
      expect(other.headers.ratelimit).toMatch(/^"per_ip";r=899;/);
    });

    it('counts HEAD and GET on a route the same way, once each', async () => {
      const app = await start({
        options: { rules: rules(perIp(100)) },
        routeRule: { name: 'limited_per_ip', key: ['ip'], limit: { requests: 2, per: '60s' } },
      });
      const head = await request(app.url).head('/limited').expect(200);
      expect(head.headers.ratelimit).toMatch(/^"limited_per_ip";r=1;/);
      await request(app.url).get('/limited').expect(200);
      await request(app.url).head('/limited').expect(429);
    });

    it('counts a request that passes global and route-level checks once per rule', async () => {
      const app = await start({
        options: { rules: rules(perIp(4)) },
        routeRule: { name: 'limited_per_ip', key: ['ip'], limit: { requests: 10, per: '60s' } },
      });
      await request(app.url).get('/limited').expect(200);
      const second = await request(app.url).get('/limited').expect(200);
      // Headers show the most constrained rule: per_ip (2 of 4 left) over limited_per_ip (8 of 10).
      expect(second.headers.ratelimit).toMatch(/^"per_ip";r=2;t=\d+$/);
      await request(app.url).get('/search').expect(200);
      await request(app.url).get('/search').expect(200);
      expect((await request(app.url).get('/search').expect(429)).headers['x-ratelimit-rule']).toBe('per_ip');
    });

    it("gives handlers the limit their response's headers show, typed", async () => {
      const app = await start({ options: { rules: rules(perIp(3, { algorithm: 'sliding_log' })) } });
      const first = await request(app.url).get('/info').expect(200);
      expect(first.body).toEqual({ rule: 'per_ip', limit: 3, remaining: 2, resetMs: 60_000 });
      expect(first.headers.ratelimit).toBe('"per_ip";r=2;t=60');
    });

    it('answers a deny rule with 403, the rule and no limit numbers; an allow rule exempts from limits', async () => {
      const app = await start({
        options: {
          rules: rules(perIp(1), { name: 'blocked', match: { ip: '127.0.0.0/8' }, action: 'deny' }),
        },
      });
      const denied = await request(app.url).get('/search').expect(403);
      expect(denied.body).toEqual({ error: 'forbidden', rule: 'blocked', retryAfter: null });
      expect(denied.headers['x-ratelimit-rule']).toBe('blocked');
      expect(denied.headers['cache-control']).toBe('no-store');
      expect(denied.headers['retry-after']).toBeUndefined();
      expect(denied.headers.ratelimit).toBeUndefined();
      await app.close();
      const office = await start({
        options: { rules: rules(perIp(1), { name: 'office', match: { ip: '127.0.0.1' }, action: 'allow' }) },
      });
      for (let i = 0; i < 3; i++) {
        const ok = await request(office.url).get('/search').expect(200);
        expect(ok.headers.ratelimit).toBeUndefined();
      }
    });

    it('shows the same rule when a global and a route rule are equally constrained', async () => {
      const app = await start({
        options: { rules: rules(perIp(10)) },
        routeRule: { name: 'limited_per_ip', key: ['ip'], limit: { requests: 10, per: '60s' } },
      });
      const first = await request(app.url).get('/limited').expect(200);
      // A tie (9 of 10 left, same reset) goes to the rule name first in order, whichever check came first.
      expect(first.headers.ratelimit).toMatch(/^"limited_per_ip";r=9;t=\d+$/);
      expect(first.headers['ratelimit-policy']).toBe('"limited_per_ip";q=10;w=60');
    });

    it('keys IPv6 clients by their /64', async () => {
      const app = await start({ trustProxy: true, options: { rules: rules(perIp(2)) } });
      const from = (ip: string) => request(app.url).get('/search').set('x-forwarded-for', ip);
      await from('2001:db8:1:2::aaaa').expect(200);
      await from('2001:db8:1:2:ffff::1').expect(200);
      await from('2001:db8:1:2::bbbb').expect(429);
      await from('2001:db8:1:3::1').expect(200);
    });

    it('ignores a spoofed X-Forwarded-For unless the app trusts proxies', async () => {
      const app = await start({ options: { rules: rules(perIp(2)) } });
      const from = (ip: string) => request(app.url).get('/search').set('x-forwarded-for', ip);
      await from('198.51.100.1').expect(200);
      await from('198.51.100.2').expect(200);
      await from('198.51.100.3').expect(429);
      await app.close();
      const trusting = await start({ trustProxy: true, options: { rules: rules(perIp(2)) } });
      for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        await request(trusting.url).get('/search').set('x-forwarded-for', ip).expect(200);
      }
    });

    it('warns once, with a code, when X-Forwarded-For arrives at an app that trusts no proxy', async () => {
      const warn = vi.fn();
      const app = await start({ options: { rules: rules(perIp(10)), logger: { warn } } });
      await request(app.url).get('/search').expect(200);
      expect(warn).not.toHaveBeenCalled();
      for (let i = 0; i < 3; i++)
        await request(app.url).get('/search').set('x-forwarded-for', '198.51.100.1');
      expect(warn).toHaveBeenCalledTimes(1);
      const line = String(warn.mock.calls[0]?.[0]);
      expect(line).toMatch(/\[SLUICE_XFF_UNTRUSTED\]$/);
      // The framework's own proxy setting is named by its adapter (core names no framework).
      const setting = FRAMEWORK_OF[adapter.name];
      if (setting !== undefined) expect(line).toContain(`Here: ${setting}'s `);
      await app.close();
      const silenced = vi.fn();
      const quiet = await start({
        options: { rules: rules(perIp(10)), logger: { warn: silenced }, silence: ['SLUICE_XFF_UNTRUSTED'] },
      });
      await request(quiet.url).get('/search').set('x-forwarded-for', '198.51.100.1').expect(200);
      expect(silenced).not.toHaveBeenCalled();
    });

    describe('concurrency leases', () => {
      const oneAtATime = (route: string) =>
        rules({
          name: 'one_at_a_time',
          match: { route },
          key: [],
          global: true,
          algorithm: 'concurrency',
          limit: { concurrent: 1 },
        });

      it('are released once when the response finishes', async () => {
        const store = new CountingStore();
        const gate = new Gate();
        const app = await start({ gate, options: { store, rules: oneAtATime('/slow') } });
        const first = request(app.url)
          .get('/slow')
          .then((response) => response.status);
        await vi.waitFor(() => expect(gate.entered).toBe(1));
        const busy = await request(app.url).get('/slow').expect(429);
        expect(busy.headers['x-ratelimit-rule']).toBe('one_at_a_time');
        gate.openAll();
        expect(await first).toBe(200);
        await vi.waitFor(() => expect([...store.released.values()]).toEqual([1]));
        const second = request(app.url)
          .get('/slow')
          .then((response) => response.status);
        await vi.waitFor(() => expect(gate.entered).toBe(2));
        gate.openAll();
        expect(await second).toBe(200);
        await vi.waitFor(() => expect([...store.released.values()]).toEqual([1, 1]));
      });

      it('are released once when the handler throws', async () => {
        const store = new CountingStore();
        const app = await start({ options: { store, rules: oneAtATime('/boom') } });
        await request(app.url).get('/boom').expect(500);
        await request(app.url).get('/boom').expect(500);
        await vi.waitFor(() => expect([...store.released.values()]).toEqual([1, 1]));
      });

      it('are released once when the client aborts', async () => {
        const store = new CountingStore();
        const gate = new Gate();
        const app = await start({ gate, options: { store, rules: oneAtATime('/slow') } });
        await abortedGet(`${app.url}/slow`, () => gate.entered === 1);
        await vi.waitFor(() => expect([...store.released.values()]).toEqual([1]));
        // The aborted handler is still running, yet its slot is free.
        const next = request(app.url)
          .get('/slow')
          .then((response) => response.status);
        await vi.waitFor(() => expect(gate.entered).toBe(2));
        gate.openAll();
        expect(await next).toBe(200);
        await vi.waitFor(() => expect([...store.released.values()]).toEqual([1, 1]));
      });
    });

    describe('leaky_bucket', () => {
      const smooth = rules({
        name: 'smooth',
        match: { route: '/smooth' },
        key: [],
        global: true,
        algorithm: 'leaky_bucket',
        limit: { requests: 1, per: '300ms', burst: 3 },
      });

      it('makes a request wait its delay, then serves it', async () => {
        const served = new Map<string, number>();
        const app = await start({ served, options: { rules: smooth } });
        await request(app.url).get('/smooth').expect(200);
        await request(app.url).get('/smooth').expect(200);
        expect(served.get('/smooth')).toBe(2);
      });

      it('does not serve a client that leaves while waiting, and gives its place back', async () => {
        const served = new Map<string, number>();
        const app = await start({ served, options: { rules: smooth } });
        await request(app.url).get('/smooth').expect(200);
        let sent = false;
        await abortedGet(`${app.url}/smooth`, () => {
          const ready = sent;
          sent = true;
          return ready;
        });
        await new Promise((resolve) => setTimeout(resolve, 400)); // past the delay the aborted request had
        expect(served.get('/smooth')).toBe(1);
        // The clock stands still, so the queue holds 1 of 3 only if the aborted place went back: two more fit.
        await request(app.url).get('/smooth').expect(200);
        await request(app.url).get('/smooth').expect(200);
        expect(served.get('/smooth')).toBe(3);
      });
    });

    it('writes sampled decision lines to the logger with `decisionLog`, descriptor values hashed', async () => {
      const lines: Record<string, unknown>[] = [];
      const keep = (entry: unknown) =>
        typeof entry === 'object' && lines.push(entry as Record<string, unknown>);
      const logger = { warn: keep, info: keep }; // pino-style: objects at info (allowed) and warn (denied)
      const app = await start({ options: { rules: rules(perIp(1)), logger, decisionLog: true } });
      await request(app.url).get('/search').set('x-api-key', 'secret-key-1').expect(200);
      await request(app.url).get('/search').set('x-api-key', 'secret-key-1').expect(429);
      const decisions = lines.filter((line) => line.event === 'sluice.decision');
      expect(decisions).toHaveLength(1); // allowed decisions are sampled at 0 by default, denials at 1
      expect(decisions[0]).toMatchObject({ outcome: 'denied', rule: 'per_ip' });
      const text = JSON.stringify(lines);
      expect(text).not.toContain('secret-key-1');
      expect(text).not.toContain('127.0.0.1');
    });

    describe('failures never become a 500', () => {
      it('fails open when the store is down, and tells the observer', async () => {
        const onStoreError = vi.fn();
        const app = await start({
          options: { store: downStore, observer: { onStoreError }, rules: rules(perIp(1)) },
        });
        await request(app.url).get('/search').expect(200);
        await request(app.url).get('/search').expect(200);
        expect(onStoreError).toHaveBeenCalled();
      });

      it('fails closed with a 503 for a rule with on_store_error: deny', async () => {
        const app = await start({
          options: {
            store: downStore,
            rules: rules(perIp(1), {
              name: 'critical',
              match: { route: '/critical' },
              key: ['ip'],
              limit: { requests: 5, per: '60s' },
              on_store_error: 'deny',
            }),
          },
        });
        await request(app.url).get('/search').expect(200);
        const denied = await request(app.url).get('/critical').expect(503);
        expect(denied.headers['retry-after']).toBe('1');
        expect(denied.headers['cache-control']).toBe('no-store');
        expect(denied.body).toEqual({ error: 'rate_limit_unavailable', rule: 'critical', retryAfter: 1 });
      });

      it('goes on with the built-in descriptors when the descriptors function throws', async () => {
        const stages: AdapterStage[] = [];
        const observer: AdapterObserver = { onAdapterError: (_error, stage) => stages.push(stage) };
        const warn = vi.fn();
        const app = await start({
          options: {
            rules: rules(perIp(2)),
            observer,
            logger: { warn },
            descriptors: () => {
              throw new Error('bug in descriptors');
            },
            cost: () => Number.NaN,
          },
        });
        await request(app.url).get('/search').expect(200);
        await request(app.url).get('/search').expect(200);
        await request(app.url).get('/search').expect(429);
        expect(stages).toContain('descriptors');
        expect(stages).toContain('cost');
        expect(warn).toHaveBeenCalledTimes(2); // once per failing stage, not per request
      });

      it('fails open when the skip function throws', async () => {
        const app = await start({
          options: {
            rules: rules(perIp(5)),
            logger: { warn: () => {} },
            skip: () => {
              throw new Error('bug in skip');
            },
          },
        });
        await request(app.url).get('/search').expect(200);
      });
    });

    it('applies the documented default without options, and says so once', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      try {
        running = await adapter.start({ options: {} as AppSpec['options'] });
        const ok = await request(running.url).get('/search').expect(200);
        expect(ok.headers['ratelimit-policy']).toBe('"default_per_ip";q=60;w=60');
        expect(warn).toHaveBeenCalledTimes(1);
        expect(String(warn.mock.calls[0]?.[0])).toMatch(/60 requests a minute per client IP/);
      } finally {
        warn.mockRestore();
      }
    });

    it('fails at start with a message naming a wrong option', async () => {
      await expect(adapter.start({ options: { headers: 'fancy' } as never })).rejects.toThrow(
        /option "headers"/,
      );
    });
  },
);

import { request as httpRequest } from 'node:http';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { type Check, type CheckResult, type Lease, MemoryStore, type Store } from '@sluice/core';
import { SluiceGuard, SluiceService } from '@sluice/nestjs';
import { RedisStore } from '@sluice/redis';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Gate } from '../adapters/apps.js';
import { perIp, rules, T0 } from '../adapters/fixtures.js';
import { randomPrefix, redisSuite } from '../support/redis.js';
import { type NestAppSpec, PLATFORMS, type RunningNestApp, startNest } from './app.js';

/** A store that counts evaluate calls (store round trips) and how often each lease is given back. */
class CountingStore implements Store {
  evaluations = 0;
  readonly released = new Map<string, number>();

  constructor(readonly inner: Store = new MemoryStore()) {}

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.evaluations += 1;
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

/** Sends a GET and drops the connection once `until` says so; resolves when the socket is gone. */
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

const smooth = rules({
  name: 'smooth',
  match: { route: '/smooth' },
  key: [],
  global: true,
  algorithm: 'leaky_bucket',
  limit: { requests: 1, per: '300ms', burst: 3 },
});

const redis = redisSuite();

const STORES = ['memory', 'redis'] as const;
// Store calls on a loaded 2-core machine can take over the default second: a timeout would fail open.
const SLOW_MACHINE_MS = 10_000;
const CASES = PLATFORMS.flatMap((platform) => STORES.map((store) => [platform, store] as const));

describe.each(CASES)('@sluice/nestjs on %s, %s store', (platform, storeKind) => {
  let running: RunningNestApp | undefined;
  let now = T0;
  const clock = () => now;

  afterEach(async () => {
    await running?.close();
    running = undefined;
    now = T0;
  });

  /** The store of the case: a fresh MemoryStore, or a RedisStore on the file's redis-server, own prefix. */
  const caseStore = (): Store =>
    storeKind === 'redis'
      ? new RedisStore({ client: redis.client, prefix: randomPrefix('nest'), timeoutMs: SLOW_MACHINE_MS })
      : new MemoryStore();

  async function start(
    spec: Partial<NestAppSpec> & { options: NestAppSpec['options'] },
  ): Promise<RunningNestApp> {
    running = await startNest({
      platform,
      ...spec,
      options: {
        clock,
        logger: { warn: () => {} },
        store: caseStore(),
        timeoutMs: SLOW_MACHINE_MS,
        ...spec.options,
      },
    });
    return running;
  }

  it('allows, then denies with 429, Retry-After, the rule, the RateLimit fields, no-store and a JSON body', async () => {
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

  it('sends legacy headers when asked', async () => {
    const app = await start({
      options: { rules: rules(perIp(1, { algorithm: 'sliding_log' })), headers: 'legacy' },
    });
    const ok = await request(app.url).get('/search').expect(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('1');
    expect(ok.headers['x-ratelimit-remaining']).toBe('0');
    expect(ok.headers['x-ratelimit-reset']).toBe(String(T0 / 1000 + 60));
    expect(ok.headers.ratelimit).toBeUndefined();
  });

  it('applies @RateLimit rules to their handler only', async () => {
    const app = await start({
      options: { rules: rules(perIp(100)) },
      routeRule: {
        name: 'limited_per_ip',
        key: ['ip'],
        limit: { requests: 2, per: '60s' },
        algorithm: 'sliding_log',
      },
    });
    await request(app.url).get('/limited').expect(200);
    await request(app.url).get('/limited').expect(200);
    const denied = await request(app.url).get('/limited').expect(429);
    expect(denied.headers['x-ratelimit-rule']).toBe('limited_per_ip');
    expect(denied.body).toEqual({ error: 'rate_limited', rule: 'limited_per_ip', retryAfter: 60 });
    await request(app.url).get('/search').expect(200);
  });

  it('decides global and route rules in one store call: a route denial consumes nothing of the global rule', async () => {
    const store = new CountingStore(caseStore());
    const app = await start({
      options: { store, rules: rules(perIp(3)) },
      routeRule: { name: 'limited_per_ip', key: ['ip'], limit: { requests: 1, per: '60s' } },
    });
    await request(app.url).get('/limited').expect(200);
    expect(store.evaluations).toBe(1);
    const denied = await request(app.url).get('/limited').expect(429);
    expect(denied.headers['x-ratelimit-rule']).toBe('limited_per_ip');
    expect(store.evaluations).toBe(2);
    // per_ip counted the first /limited only: two more requests fit in its 3.
    const second = await request(app.url).get('/search').expect(200);
    expect(second.headers.ratelimit).toMatch(/^"per_ip";r=1;/);
    await request(app.url).get('/search').expect(200);
    expect((await request(app.url).get('/search').expect(429)).headers['x-ratelimit-rule']).toBe('per_ip');
  });

  it('takes the shorthand in @RateLimit, its rule named after the controller and handler', async () => {
    const app = await start({ options: { rules: rules(perIp(100)) }, routeRule: { limit: 1, per: '1m' } });
    const ok = await request(app.url).get('/limited').expect(200);
    expect(ok.headers['ratelimit-policy']).toBe('"main_controller_limited";q=1;w=60');
    const denied = await request(app.url).get('/limited').expect(429);
    // sliding_window (the default): the one request made at the window's start weighs on the next window too.
    expect(denied.body).toEqual({ error: 'rate_limited', rule: 'main_controller_limited', retryAfter: 120 });
  });

  it('takes the shorthand as module options', async () => {
    const app = await start({ options: { limit: 1, per: '1m' } });
    await request(app.url).get('/search').expect(200);
    const denied = await request(app.url).get('/search').expect(429);
    expect(denied.headers['x-ratelimit-rule']).toBe('per_ip');
  });

  it("shares a controller's @RateLimit among its handlers; a handler's @SkipRateLimit replaces it", async () => {
    const app = await start({
      options: { rules: rules(perIp(100)) },
      controllerRule: { limit: 2, per: '1m' },
    });
    await request(app.url).get('/admin/one').expect(200);
    await request(app.url).get('/admin/two').expect(200);
    const denied = await request(app.url).get('/admin/one').expect(429);
    expect(denied.headers['x-ratelimit-rule']).toBe('admin_controller');
    for (let i = 0; i < 3; i++) {
      const open = await request(app.url).get('/admin/open').expect(200);
      expect(open.headers.ratelimit).toBeUndefined();
    }
    await request(app.url).get('/search').expect(200);
  });

  it('does not limit, nor count, a handler marked @SkipRateLimit', async () => {
    const app = await start({ options: { rules: rules(perIp(1)) } });
    for (let i = 0; i < 3; i++) {
      const response = await request(app.url).get('/unlimited').expect(200);
      expect(response.headers.ratelimit).toBeUndefined();
    }
    await request(app.url).get('/search').expect(200);
    await request(app.url).get('/search').expect(429);
  });

  it('does not limit requests the skip option skips', async () => {
    const app = await start({ options: { rules: rules(perIp(1)), skip: (req) => req.url === '/health' } });
    for (let i = 0; i < 3; i++) await request(app.url).get('/health').expect(200);
    await request(app.url).get('/search').expect(200);
    await request(app.url).get('/search').expect(429);
  });

  it('gives handlers the decision through @RateLimitInfo(), the numbers the headers show', async () => {
    const app = await start({ options: { rules: rules(perIp(3, { algorithm: 'sliding_log' })) } });
    const first = await request(app.url).get('/info').expect(200);
    expect(first.body).toEqual({ rule: 'per_ip', limit: 3, remaining: 2, resetMs: 60_000 });
    expect(first.headers.ratelimit).toBe('"per_ip";r=2;t=60');
  });

  it('answers a deny rule with 403, the rule and no limit numbers', async () => {
    const app = await start({
      options: { rules: rules(perIp(1), { name: 'blocked', match: { ip: '127.0.0.0/8' }, action: 'deny' }) },
    });
    const denied = await request(app.url).get('/search').expect(403);
    expect(denied.body).toEqual({ error: 'forbidden', rule: 'blocked', retryAfter: null });
    expect(denied.headers['x-ratelimit-rule']).toBe('blocked');
    expect(denied.headers['cache-control']).toBe('no-store');
    expect(denied.headers['retry-after']).toBeUndefined();
  });

  it('keys clients by the address the platform trusts: a spoofed X-Forwarded-For counts only behind a trusted proxy', async () => {
    const app = await start({ options: { rules: rules(perIp(2)) } });
    const from = (url: string, ip: string) => request(url).get('/search').set('x-forwarded-for', ip);
    await from(app.url, '198.51.100.1').expect(200);
    await from(app.url, '198.51.100.2').expect(200);
    await from(app.url, '198.51.100.3').expect(429);
    await app.close();
    const trusting = await start({ trustProxy: true, options: { rules: rules(perIp(2)) } });
    await from(trusting.url, '2001:db8:1:2::aaaa').expect(200);
    await from(trusting.url, '2001:db8:1:2:ffff::1').expect(200);
    await from(trusting.url, '2001:db8:1:2::bbbb').expect(429);
    await from(trusting.url, '2001:db8:1:3::1').expect(200);
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
      const store = new CountingStore(caseStore());
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
    });

    it('are released once when the client aborts', async () => {
      const store = new CountingStore(caseStore());
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
    });

    it('are released once when the handler throws', async () => {
      const store = new CountingStore(caseStore());
      const app = await start({ options: { store, rules: oneAtATime('/boom') } });
      await request(app.url).get('/boom').expect(500);
      await request(app.url).get('/boom').expect(500);
      await vi.waitFor(() => expect([...store.released.values()]).toEqual([1, 1]));
    });
  });

  it('makes a leaky_bucket request wait its delay, then serves it', async () => {
    const served = new Map<string, number>();
    const app = await start({ served, options: { rules: smooth } });
    await request(app.url).get('/smooth').expect(200);
    await request(app.url).get('/smooth').expect(200);
    expect(served.get('/smooth')).toBe(2);
  });

  it('does not serve a leaky_bucket client that leaves while waiting, and gives its place back', async () => {
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
      const critical = {
        name: 'critical',
        match: { route: '/critical' },
        key: ['ip'],
        limit: { requests: 5, per: '60s' },
        on_store_error: 'deny' as const,
      };
      const app = await start({ options: { store: downStore, rules: rules(perIp(1), critical) } });
      await request(app.url).get('/search').expect(200);
      const denied = await request(app.url).get('/critical').expect(503);
      expect(denied.headers['retry-after']).toBe('1');
      expect(denied.headers['cache-control']).toBe('no-store');
      expect(denied.body).toEqual({ error: 'rate_limit_unavailable', rule: 'critical', retryAfter: 1 });
    });

    it('fails open when the skip function throws', async () => {
      const app = await start({
        options: {
          rules: rules(perIp(5)),
          skip: () => {
            throw new Error('bug in skip');
          },
        },
      });
      await request(app.url).get('/search').expect(200);
    });
  });

  it('takes its options from a factory with imports and inject (forRootAsync)', async () => {
    const app = await start({ async: true, options: { rules: rules(perIp(1)) } });
    await request(app.url).get('/search').expect(200);
    expect((await request(app.url).get('/search').expect(429)).headers['x-ratelimit-rule']).toBe('per_ip');
  });
});

describe.each(PLATFORMS)('@sluice/nestjs start-up on %s', (platform) => {
  it('fails to start on an unknown option, naming the one meant', async () => {
    await expect(
      startNest({ platform, options: { rules: rules(perIp(1)), timeoutMS: 100 } as never }),
    ).rejects.toThrow(/unknown option "timeoutMS" \(did you mean "timeoutMs"\?\)/);
  });

  it('fails to start on a wrong @RateLimit, naming the handler', async () => {
    await expect(
      startNest({
        platform,
        options: { rules: rules(perIp(1)), logger: { warn: () => {} } },
        routeRule: { limit: 0, per: '1m' },
      }),
    ).rejects.toThrow(/@RateLimit on MainController\.limited: the shorthand/);
  });

  it('fails to start when a @RateLimit rule takes a global rule name', async () => {
    await expect(
      startNest({
        platform,
        options: { rules: rules(perIp(1)), logger: { warn: () => {} } },
        routeRule: perIp(5),
      }),
    ).rejects.toThrow(/per_ip/);
  });
});

describe('@sluice/nestjs beyond HTTP', () => {
  let running: RunningNestApp | undefined;

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('refuses onDenied, pointing at an exception filter', async () => {
    const options = { rules: rules(perIp(1)), onDenied: () => {} } as never;
    await expect(startNest({ platform: 'express', options })).rejects.toThrow(/exception filter/);
  });

  it('lets GraphQL, RPC and WebSocket contexts through untouched, counting nothing', async () => {
    class Resolver {
      search() {
        return [];
      }
    }
    const store = new CountingStore();
    const onAdapterError = vi.fn();
    running = await startNest({
      platform: 'express',
      options: { store, rules: rules(perIp(1)), logger: { warn: () => {} }, observer: { onAdapterError } },
    });
    const guard = new SluiceGuard(running.app.get(SluiceService), running.app.get(Reflector));
    const request = { method: 'POST', url: '/graphql', headers: {} };
    for (const type of ['graphql', 'rpc', 'ws'] as const) {
      // A resolver's arguments: root, args, the GraphQL context (holding the request), info.
      const context = new ExecutionContextHost(
        [{}, {}, { req: request }, {}],
        Resolver,
        Resolver.prototype.search,
      );
      context.setType(type);
      expect(guard.canActivate(context)).toBe(true);
    }
    // Neither counted nor misread as an HTTP request (which would be reported as a failure).
    expect(store.evaluations).toBe(0);
    expect(onAdapterError).not.toHaveBeenCalled();
    expect('rateLimit' in request).toBe(false);
  });
});

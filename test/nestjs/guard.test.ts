import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { type Check, type CheckResult, type Lease, MemoryStore, type Store } from '@sluice/core';
import { SluiceGuard, SluiceService } from '@sluice/nestjs';
import { RedisStore } from '@sluice/redis';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { perIp, rules, T0 } from '../adapters/fixtures.js';
import { type NestAppSpec, PLATFORMS, type RunningNestApp, startNest } from '../adapters/nest-app.js';
import { randomPrefix, redisSuite } from '../support/redis.js';

// What only Nest has: decorators on controllers and handlers, forRootAsync, start-up failures naming the
// handler, the guard outside HTTP. Every other behaviour is the shared adapter contract's (test/adapters/), which
// runs on Nest with Express and with Fastify underneath.

/** A store that counts evaluate calls (store round trips). */
class CountingStore implements Store {
  evaluations = 0;
  readonly inner = new MemoryStore();

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.evaluations += 1;
    return this.inner.evaluate(checks, now);
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.inner.release(leases, now);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

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

  it('takes its options from a factory with imports and inject (forRootAsync)', async () => {
    const app = await start({ async: true, options: { rules: rules(perIp(1)) } });
    await request(app.url).get('/search').expect(200);
    expect((await request(app.url).get('/search').expect(429)).headers['x-ratelimit-rule']).toBe('per_ip');
  });
});

describe.each(PLATFORMS)('@sluice/nestjs start-up on %s', (platform) => {
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

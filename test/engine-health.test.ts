/** limiter.health() over a real store: MemoryStore, and a RedisStore whose redis-server is stopped and restarted. */
import { compileRules, createLimiter, MemoryStore } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { randomPrefix, ready, startRedis } from './support/redis.js';

const rules = compileRules({
  domain: 'health',
  rules: [{ name: 'per_user', key: ['user'], limit: { requests: 100, per: '1m' } }],
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('limiter.health()', () => {
  it("with a MemoryStore: healthy, and the store's own report (keys held)", async () => {
    const store = new MemoryStore();
    const limiter = createLimiter({ rules, store });
    await limiter.check({ user: 'a' });
    await limiter.check({ user: 'b' });
    expect(limiter.health()).toMatchObject({
      healthy: true,
      connected: true,
      breaker: 'closed',
      pending: 0,
      observerFailures: 0,
      store: { keys: 2, evictions: 0 },
      local: { keys: 0 },
    });
  });

  it('with a RedisStore: unhealthy and failing open since the outage while Redis is stopped, healthy again after', async () => {
    let server = await startRedis();
    const redis = new Redis({
      host: server.host,
      port: server.port,
      ...recommendedRedisOptions,
      retryStrategy: () => 50,
    });
    redis.on('error', () => {}); // connection errors are the point here
    await ready(redis);
    const store = new RedisStore({ client: redis, prefix: randomPrefix(), timeoutMs: 200 });
    const limiter = createLimiter({ rules, store, timeoutMs: 10_000 });
    try {
      expect((await limiter.check({ user: 'u' })).failedOpen).toBe(false);
      expect(limiter.health()).toMatchObject({
        healthy: true,
        connected: true,
        breaker: 'closed',
        pending: 0,
      });

      const outage = Date.now();
      await server.stop();
      for (let i = 0; i < 10; i++) expect((await limiter.check({ user: 'u' })).failedOpen).toBe(true);
      const down = limiter.health();
      expect(down).toMatchObject({ healthy: false, connected: false });
      expect(down.failingOpenSince).toBeGreaterThanOrEqual(outage);
      expect(down.failingOpenSince).toBeLessThanOrEqual(Date.now());

      server = await startRedis({ port: server.port });
      let recovered = false;
      for (let i = 0; i < 400 && !recovered; i++) {
        recovered = !(await limiter.check({ user: 'u' })).failedOpen && limiter.health().healthy;
        if (!recovered) await sleep(25);
      }
      expect(recovered).toBe(true);
      expect(limiter.health()).toMatchObject({ connected: true, breaker: 'closed' });
      expect(limiter.health().failingOpenSince).toBeUndefined();
    } finally {
      await limiter.close();
      redis.disconnect();
      await server.stop();
    }
  }, 60_000);
});

import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from '../support/redis.js';
import { adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

// A RedisStore whose Redis is down answers from its in-process fallback counter: a denial by that counter is
// a 429 with Retry-After on every adapter; a rule failing closed with no counter (on_store_error: deny) a 503.

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  'a real RedisStore with a fallback, Redis stopped: %s',
  (_name, adapter) => {
    let running: RunningApp | undefined;
    let server: RedisServer | undefined;
    let client: Redis | undefined;

    afterEach(async () => {
      await running?.close();
      client?.disconnect();
      await server?.stop();
      running = undefined;
      client = undefined;
      server = undefined;
    });

    async function stoppedRedisStore(fallback?: { gateways: number }): Promise<RedisStore> {
      server = await startRedis();
      client = new Redis({ host: server.host, port: server.port, ...recommendedRedisOptions });
      client.on('error', () => {}); // the outage below is expected
      await ready(client);
      const store = new RedisStore({
        client,
        prefix: randomPrefix(),
        timeoutMs: 200,
        ...(fallback ? { fallback } : {}),
      });
      await server.stop();
      server = undefined;
      return store;
    }

    it('answers a denial by the fallback counter with 429 and Retry-After', async () => {
      const store = await stoppedRedisStore({ gateways: 1 });
      running = await adapter.start({
        options: {
          store,
          clock: () => T0,
          logger: { warn: () => {} },
          rules: rules(perIp(2, { algorithm: 'sliding_log' })),
        },
      });
      await request(running.url).get('/search').expect(200);
      await request(running.url).get('/search').expect(200);
      const denied = await request(running.url).get('/search').expect(429);
      expect(denied.body).toEqual({ error: 'rate_limited', rule: 'per_ip', retryAfter: 60 });
      expect(denied.headers['retry-after']).toBe('60');
      expect(denied.headers['cache-control']).toBe('no-store');
    });

    it('answers a rule that fails closed with no counter with 503', async () => {
      const store = await stoppedRedisStore();
      running = await adapter.start({
        options: {
          store,
          clock: () => T0,
          logger: { warn: () => {} },
          rules: rules(perIp(2, { on_store_error: 'deny' })),
        },
      });
      const denied = await request(running.url).get('/search').expect(503);
      expect(denied.body).toEqual({ error: 'rate_limit_unavailable', rule: 'per_ip', retryAfter: 1 });
      expect(denied.headers['cache-control']).toBe('no-store');
    });
  },
);

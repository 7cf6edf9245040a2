/**
 * Retries as a descriptor and retry_jitter with the counters in a real redis-server (a private one, see
 * test/support/redis.ts), on Fastify, Express and Koa with @sluice/client.
 */
import { createFetch } from '@sluice/client';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from '../support/redis.js';
import { JITTERED_CAP, SEPARATE_RETRIES } from './retryRules.js';
import { FRAMEWORKS, type Framework, type LimiterSetup, startServer, type TestServer } from './servers.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const clock = () => T0;

let redis: RedisServer;
let server: TestServer | undefined;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const client of clients.splice(0)) client.disconnect();
});

afterAll(async () => {
  await redis.stop();
});

async function redisStore(): Promise<RedisStore> {
  const client = new Redis({ host: redis.host, port: redis.port, ...recommendedRedisOptions });
  clients.push(client);
  await ready(client);
  return new RedisStore({ client, prefix: randomPrefix('retry'), timeoutMs: 500 });
}

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  'on %s, RedisStore',
  (framework: Framework) => {
    async function start(rules: LimiterSetup['rules']): Promise<string> {
      server = await startServer(framework, { rules, clock, store: await redisStore() });
      return server.url;
    }

    it('counts retries apart and caps them', async () => {
      const url = await start({ domain: 'retries', rules: SEPARATE_RETRIES });
      const client = createFetch({ now: clock, sleep: async () => {}, pacing: false, maxWaitMs: 120_000 });
      expect((await client(`${url}/items`)).status).toBe(200);
      expect((await client(`${url}/items`)).status).toBe(200);
      const capped = await client(`${url}/items`);
      expect(capped.status).toBe(429);
      expect(capped.headers.get('x-ratelimit-rule')).toBe('retries');
      expect(server?.hits.map((hit) => hit.retry)).toEqual([undefined, undefined, '1', undefined, '1', '2']);
    });

    it('spreads Retry-After over [exact, exact + 10%] with retry_jitter', async () => {
      const url = await start({
        domain: 'jitter',
        rules: [JITTERED_CAP],
      });
      expect((await fetch(`${url}/items`)).status).toBe(200);
      const waits: number[] = [];
      for (let i = 0; i < 30; i++) {
        const response = await fetch(`${url}/items`);
        expect(response.status).toBe(429);
        waits.push(Number(response.headers.get('retry-after')));
      }
      for (const wait of waits) {
        expect(wait).toBeGreaterThanOrEqual(60);
        expect(wait).toBeLessThanOrEqual(66);
      }
      expect(new Set(waits).size).toBeGreaterThan(1);
    });
  },
);

/**
 * The service on a private redis-server, and one budget shared with a Fastify app: a request through Envoy
 * and a request Fastify serves that match the same rule and key spend the same counter.
 */
import { rateLimit } from '@sluice/fastify';
import { RedisStore } from '@sluice/redis';
import Fastify, { type FastifyInstance } from 'fastify';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RedisServer,
  randomPrefix,
  ready,
  redisCli,
  startCluster,
  startRedis,
} from '../../../test/support/redis.js';
import { createRateLimitService, type RateLimitService } from './service.js';
import { d, headers, rlsClient } from './testing/client.js';

const RULES = {
  domain: 'public_api',
  rules: [
    { name: 'key_default', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 5, per: '60s' } },
    { name: 'anon_per_ip', match: { auth: 'anonymous' }, key: ['ip'], limit: { requests: 60, per: '60s' } },
  ],
} as const;

let server: RedisServer;
const clients: Redis[] = [];

async function client(): Promise<Redis> {
  const redis = new Redis({ host: server.host, port: server.port });
  await ready(redis);
  clients.push(redis);
  return redis;
}

/** Script calls (EVALSHA, EVAL) in INFO commandstats since the last CONFIG RESETSTAT. */
function scriptCalls(info: string): number {
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

const SLOW_BOX = { timeoutMs: 5000, breaker: false } as const;

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const redis of clients) redis.disconnect();
  await server.stop();
});

describe('the rate limit service on Redis', () => {
  let service: RateLimitService;
  let rls: ReturnType<typeof rlsClient>;
  let app: FastifyInstance;
  let url: string;
  const prefix = randomPrefix('envoy');

  beforeAll(async () => {
    const store = new RedisStore({ client: await client(), prefix, ...SLOW_BOX });
    service = await createRateLimitService({ rules: RULES, store, port: 0, logger: { warn() {} } });
    rls = rlsClient(service.port);
    app = Fastify();
    const appStore = new RedisStore({ client: await client(), prefix, ...SLOW_BOX });
    await app.register(rateLimit, { rules: RULES, store: appStore, silence: ['SLUICE_UNVALIDATED_API_KEY'] });
    app.get('/items', async () => ({ ok: true }));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    rls.close();
    await service.close();
    await app.close();
  });

  const envoyCall = (key: string) =>
    rls.shouldRateLimit({ domain: 'public_api', descriptors: [d(['auth', 'api_key'], ['api_key', key])] });
  const appCall = (key: string) => fetch(`${url}/items`, { headers: { 'x-api-key': key } });

  it('counts in Redis: OVER_LIMIT after the limit, with the same numbers as HTTP', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await envoyCall('solo')).statuses[0]);
    expect(statuses.map((s) => s?.code)).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'OVER_LIMIT']);
    expect(statuses.map((s) => s?.limit_remaining)).toEqual([4, 3, 2, 1, 0, 0]);
  });

  it('Envoy and Fastify spend one budget for a rule matching both', async () => {
    for (let i = 0; i < 3; i++) expect((await envoyCall('shared')).overall_code).toBe('OK');
    const fourth = await appCall('shared');
    expect(fourth.status).toBe(200);
    expect(fourth.headers.get('ratelimit')).toMatch(/^"key_default";r=1;/);
    expect((await appCall('shared')).status).toBe(200);
    const denied = await appCall('shared');
    expect(denied.status).toBe(429);
    const envoy = await envoyCall('shared');
    expect(envoy.overall_code).toBe('OVER_LIMIT');
    // The headers Envoy adds are the ones Fastify sends for the same denial.
    expect(headers(envoy)['RateLimit-Policy']).toBe(denied.headers.get('ratelimit-policy'));
    expect(Number(headers(envoy)['Retry-After'])).toBeGreaterThanOrEqual(
      Number(denied.headers.get('retry-after')) - 1,
    );
    // Another key has its own budget.
    expect((await envoyCall('other')).overall_code).toBe('OK');
  });

  it('three descriptors in ONE script call, all or nothing', async () => {
    const call = (...keys: string[]) =>
      rls.shouldRateLimit({
        domain: 'public_api',
        descriptors: keys.map((key) => d(['auth', 'api_key'], ['api_key', key])),
      });
    await call('warm'); // loads the script, so that the counted call is one EVALSHA
    await redisCli(server.port, 'CONFIG', 'RESETSTAT');
    const three = await call('one-a', 'one-b', 'one-c');
    expect(three.statuses.map((s) => s.limit_remaining)).toEqual([4, 4, 4]);
    expect(scriptCalls(await redisCli(server.port, 'INFO', 'commandstats'))).toBe(1);
    for (let i = 0; i < 4; i++) await call('one-c');
    const denied = await call('one-a', 'one-b', 'one-c');
    expect(denied.statuses.map((s) => s.code)).toEqual(['OK', 'OK', 'OVER_LIMIT']);
    // one-a and one-b were not counted by the denied call: 3 left after this one, not 2.
    expect((await call('one-a')).statuses[0]?.limit_remaining).toBe(3);
  });

  it('a stopped Redis: key_default (on_store_error allow) answers OK, counted, never a crash', async () => {
    const lonely = await startRedis();
    const redis = new Redis({ host: lonely.host, port: lonely.port, maxRetriesPerRequest: 0 });
    await ready(redis);
    const lines: string[] = [];
    const store = new RedisStore({
      client: redis,
      prefix: randomPrefix('down'),
      timeoutMs: 300,
      breaker: false,
    });
    const down = await createRateLimitService({
      rules: RULES,
      store,
      port: 0,
      logger: { warn: (m) => lines.push(m) },
    });
    const downClient = rlsClient(down.port);
    await lonely.stop();
    const response = await downClient.shouldRateLimit({
      domain: 'public_api',
      descriptors: [d(['auth', 'api_key'], ['api_key', 'k'])],
    });
    expect(response.overall_code).toBe('OK');
    expect(down.stats().storeFailed).toBe(1);
    expect(lines.some((l) => l.startsWith('SLUICE_ENVOY_FAILED_OPEN'))).toBe(true);
    downClient.close();
    await down.close();
    redis.disconnect();
  });
});

describe('the rate limit service on Redis Cluster', () => {
  it('three descriptors of three keys (three slots) in one call, each counted to its limit', async () => {
    const cluster = await startCluster(3);
    const client = new Cluster(cluster.nodes);
    await ready(client);
    const store = new RedisStore({ client, prefix: randomPrefix('envoyc'), ...SLOW_BOX });
    const service = await createRateLimitService({ rules: RULES, store, port: 0, logger: { warn() {} } });
    const rls = rlsClient(service.port);
    try {
      const keys = ['alpha', 'bravo', 'charlie'].map((key) => d(['auth', 'api_key'], ['api_key', key]));
      const remaining: number[][] = [];
      for (let i = 0; i < 6; i++) {
        const response = await rls.shouldRateLimit({ domain: 'public_api', descriptors: keys });
        remaining.push(response.statuses.map((s) => (s.code === 'OVER_LIMIT' ? -1 : s.limit_remaining)));
      }
      expect(remaining).toEqual([
        [4, 4, 4],
        [3, 3, 3],
        [2, 2, 2],
        [1, 1, 1],
        [0, 0, 0],
        [-1, -1, -1],
      ]);
    } finally {
      rls.close();
      await service.close();
      client.disconnect();
      await cluster.stop();
    }
  });
});

/**
 * A RedisStore outlives the apps built on it: an app closed and built again on the same store (tests, hot
 * restarts, two apps sharing one store) keeps limiting, with its RateLimit headers. The limiter closes only the
 * stores it made; the store is the app's, as its client is. Through a real Fastify app, over HTTP.
 */
import { rateLimit } from '@sluice/fastify';
import { RedisStore } from '@sluice/redis';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const LIMIT = 3;

async function appOn(store: RedisStore, warnings: string[]): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(rateLimit, {
    store,
    rules: {
      domain: 'reuse',
      rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: LIMIT, per: '60s' } }],
    },
    logger: { warn: (message: string) => warnings.push(message) },
  });
  app.get('/', async () => 'ok');
  await app.ready();
  return app;
}

async function statuses(app: FastifyInstance, count: number) {
  const answers = [];
  for (let i = 0; i < count; i++) {
    const response = await app.inject({ method: 'GET', url: '/', remoteAddress: '198.51.100.7' });
    answers.push({ status: response.statusCode, header: response.headers.ratelimit });
  }
  return answers;
}

describe('an app closed and built again on the same RedisStore', () => {
  const stores: RedisStore[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  it('keeps limiting, with RateLimit headers, counting on from the first app', async () => {
    const store = new RedisStore({ client: redis.client, prefix: randomPrefix(), timeoutMs: 1000 });
    stores.push(store);
    const warnings: string[] = [];
    const first = await appOn(store, warnings);
    expect((await statuses(first, 2)).map((a) => a.status)).toEqual([200, 200]);
    await first.close();

    const second = await appOn(store, warnings);
    const answers = await statuses(second, 2);
    expect(answers.map((a) => a.status)).toEqual([200, 429]);
    for (const answer of answers) expect(answer.header).toMatch(/^"per_ip";r=\d+;t=\d+$/);
    expect(store.health().connected).toBe(true);
    await second.close();
  });

  it('two apps share one store: closing one leaves the other limiting', async () => {
    const store = new RedisStore({ client: redis.client, prefix: randomPrefix(), timeoutMs: 1000 });
    stores.push(store);
    const warnings: string[] = [];
    const [a, b] = [await appOn(store, warnings), await appOn(store, warnings)];
    await a.close();
    const answers = await statuses(b, LIMIT + 1);
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 429]);
    await b.close();
  });

  it('a store closed by the app and used again says so, once, and its calls fail (never a silent admit)', async () => {
    const warnings: string[] = [];
    const store = new RedisStore({
      client: redis.client,
      prefix: randomPrefix(),
      timeoutMs: 1000,
      logger: { warn: (message) => warnings.push(message) },
    });
    await store.close();
    const check = {
      rule: 'per_ip',
      tag: 'tagEEEEEEEEEEEEEEEEEEEE',
      algorithm: 'fixed_window' as const,
      params: { limit: 1, windowMs: 1000, burst: 1 },
      cost: 1,
      mode: 'enforce' as const,
    };
    for (let i = 0; i < 3; i++) {
      await expect(store.evaluate([check], Date.now())).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE' });
    }
    expect(warnings.filter((w) => w.includes('[SLUICE_STORE_CLOSED]'))).toHaveLength(1);
  });
});

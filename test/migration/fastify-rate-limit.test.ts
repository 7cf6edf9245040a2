/** MIGRATING.md, @fastify/rate-limit: every claim of its section, run against @fastify/rate-limit itself. */
import fastifyRateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import { type FastifyRateLimitOptions, rateLimit as sluice } from '@sluice/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { firstDenial, headerOf, quiet, type Reply, send, statuses } from './support.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function start(register: (app: FastifyInstance) => PromiseLike<unknown>): Promise<string> {
  const app = Fastify();
  apps.push(app);
  await register(app);
  app.get('/', async () => ({ hello: 'world' }));
  return app.listen({ port: 0, host: '127.0.0.1' });
}

async function sideBySide(
  before: RateLimitPluginOptions,
  after: FastifyRateLimitOptions,
  count: number,
): Promise<[Reply[], Reply[]]> {
  const [a, b] = await Promise.all([
    start((app) => app.register(fastifyRateLimit, before)),
    start((app) => app.register(sluice, { logger: quiet, ...after })),
  ]);
  return Promise.all([send(a, count), send(b, count)]);
}

describe('@fastify/rate-limit -> @sluice/fastify', () => {
  it("enableDraftSpec: the same first 429 and the same RateLimit-Limit/-Remaining/-Reset and Retry-After as headers: 'draft-6'", async () => {
    const [before, after] = await sideBySide(
      { max: 3, timeWindow: '1 minute', enableDraftSpec: true },
      { limit: 3, per: '1m', algorithm: 'first_request_window', headers: 'draft-6' },
      5,
    );
    expect(statuses(before)).toEqual([200, 200, 200, 429, 429]);
    expect(statuses(after)).toEqual(statuses(before));
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    expect(firstDenial(after).headers['retry-after']).toBe('60');
  });

  it('its default x-ratelimit-reset counts seconds from now; Sluice legacy sends a Unix time', async () => {
    const [before, after] = await sideBySide(
      { max: 2, timeWindow: 60_000 },
      { limit: 2, per: '1m', algorithm: 'first_request_window', headers: 'legacy' },
      3,
    );
    expect(statuses(after)).toEqual(statuses(before));
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    const now = Date.now() / 1000;
    expect(Number(before[0]?.headers['x-ratelimit-reset'])).toBe(60);
    expect(Math.abs(Number(after[0]?.headers['x-ratelimit-reset']) - (now + 60))).toBeLessThanOrEqual(2);
  });

  it('a route limit: the same first 429 on the route, the global limit elsewhere', async () => {
    const results = async () => ({ results: [] });
    const [a, b] = await Promise.all([
      start(async (app) => {
        await app.register(fastifyRateLimit, { max: 10, timeWindow: '1 minute' });
        app.get(
          '/search', // Both plugins declare the route's config.rateLimit; their types cannot both hold in one program.
          { config: { rateLimit: { max: 2, timeWindow: '1 minute' } as never } },
          results,
        );
      }),
      start(async (app) => {
        await app.register(sluice, {
          logger: quiet,
          rules: {
            domain: 'api',
            rules: [
              {
                name: 'per_ip',
                match: { route: { not: ['/search'] } },
                key: ['ip'],
                limit: { requests: 10, per: '1m' },
              },
            ],
          },
        });
        app.get(
          '/search',
          { config: { rateLimit: { limit: 2, per: '1m', algorithm: 'first_request_window' } } },
          results,
        );
      }),
    ]);
    const search = await Promise.all([send(`${a}/search`, 3), send(`${b}/search`, 3)]);
    expect(search.map(statuses)).toEqual([
      [200, 200, 429],
      [200, 200, 429],
    ]);
    const root = await Promise.all([send(a, 11), send(b, 11)]);
    expect(statuses(root[1])).toEqual(statuses(root[0]));
    expect(statuses(root[0]).indexOf(429)).toBe(10);
  });
});

/** MIGRATING.md, hono-rate-limiter: every claim of its section, run against hono-rate-limiter itself. */
import { type ServerType, serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { rateLimit as sluice } from '@sluice/hono';
import { Hono, type MiddlewareHandler } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { afterEach, describe, expect, it } from 'vitest';
import { firstDenial, headerOf, quiet, send, statuses } from './support.js';

const servers: ServerType[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function start(limiter: MiddlewareHandler): Promise<string> {
  const app = new Hono();
  app.use(limiter);
  app.get('/', (c) => c.text('ok'));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(`http://127.0.0.1:${info.port}`),
    );
    servers.push(server);
  });
}

describe('hono-rate-limiter -> @sluice/hono', () => {
  it.each(['draft-6', 'draft-7'] as const)(
    '%s: the same first 429, the same RateLimit fields and Retry-After with first_request_window',
    async (form) => {
      const [a, b] = await Promise.all([
        start(
          rateLimiter({
            windowMs: 60_000,
            limit: 3,
            standardHeaders: form,
            keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
          }),
        ),
        start(
          sluice({ logger: quiet, limit: 3, per: '1m', algorithm: 'first_request_window', headers: form }),
        ),
      ]);
      const [before, after] = await Promise.all([send(a, 5), send(b, 5)]);
      expect(statuses(before)).toEqual([200, 200, 200, 429, 429]);
      expect(statuses(after)).toEqual(statuses(before));
      const names =
        form === 'draft-6'
          ? ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']
          : ['ratelimit-policy', 'ratelimit'];
      for (const name of [...names, 'retry-after'])
        expect(headerOf(after, name)).toEqual(headerOf(before, name));
      expect(firstDenial(after).headers['retry-after']).toBe('60');
    },
  );
});

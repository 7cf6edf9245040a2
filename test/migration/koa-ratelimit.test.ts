/** MIGRATING.md, koa-ratelimit: every claim of its section, run against koa-ratelimit itself. */
import { createServer } from 'node:http';
import { rateLimit as sluice } from '@sluice/koa';
import Koa from 'koa';
import ratelimit from 'koa-ratelimit';
import { afterEach, describe, expect, it } from 'vitest';
import { firstDenial, headerOf, listen, quiet, send, statuses } from './support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function app(limiter: Koa.Middleware): Promise<string> {
  const koa = new Koa();
  koa.use(limiter);
  koa.use((ctx) => {
    ctx.body = 'ok';
  });
  const running = await listen(createServer(koa.callback()));
  closers.push(running.close);
  return running.url;
}

describe('koa-ratelimit -> @sluice/koa', () => {
  it("the same first 429 and the same X-RateLimit-Limit/-Remaining with headers: 'legacy'; Reset and Retry-After rounded up", async () => {
    const [a, b] = await Promise.all([
      app(ratelimit({ driver: 'memory', db: new Map(), duration: 60_000, max: 4, id: (ctx) => ctx.ip })),
      app(
        sluice({ logger: quiet, limit: 4, per: '1m', algorithm: 'first_request_window', headers: 'legacy' }),
      ),
    ]);
    const [before, after] = await Promise.all([send(a, 6), send(b, 6)]);
    expect(statuses(before)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(statuses(after)).toEqual(statuses(before));
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    // koa-ratelimit: the reset as a Unix time with microseconds, Retry-After truncated; Sluice rounds both up.
    const theirs = headerOf(before, 'x-ratelimit-reset').map(Number);
    headerOf(after, 'x-ratelimit-reset').forEach((reset, i) => {
      expect(Number(reset)).toBeGreaterThanOrEqual(Math.ceil(theirs[i] ?? Number.NaN));
      expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(theirs[i] ?? Number.NaN) + 1);
    });
    expect(firstDenial(before).headers['retry-after']).toBe('59');
    expect(firstDenial(after).headers['retry-after']).toBe('60');
  });
});

/** MIGRATING.md, express-rate-limit: every claim of its section, run against express-rate-limit itself. */
import { createServer } from 'node:http';
import { type ExpressRateLimitOptions, rateLimit as sluice } from '@sluice/express';
import express, { type RequestHandler } from 'express';
import { rateLimit as erl } from 'express-rate-limit';
import { afterEach, describe, expect, it } from 'vitest';
import { firstDenial, headerOf, listen, quiet, type Reply, send, sleep, statuses } from './support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function app(limiter: RequestHandler): Promise<string> {
  const server = express();
  server.use(limiter);
  server.get('/', (_req, res) => res.json({ ok: true }));
  const running = await listen(createServer(server));
  closers.push(running.close);
  return running.url;
}

/** The same requests to express-rate-limit with `before` and to @sluice/express with `after`. */
async function sideBySide(
  before: Parameters<typeof erl>[0],
  after: ExpressRateLimitOptions,
  count: number,
): Promise<[Reply[], Reply[]]> {
  const [a, b] = await Promise.all([app(erl(before)), app(sluice({ logger: quiet, ...after }))]);
  return Promise.all([send(a, count), send(b, count)]);
}

describe('express-rate-limit -> @sluice/express', () => {
  it('first_request_window with draft-7: the same first 429, the same RateLimit fields and Retry-After', async () => {
    const [before, after] = await sideBySide(
      { windowMs: 15 * 60_000, limit: 5, standardHeaders: 'draft-7', legacyHeaders: false },
      { limit: 5, per: '15m', algorithm: 'first_request_window', headers: 'draft-7' },
      7,
    );
    expect(statuses(before)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(statuses(after)).toEqual(statuses(before));
    for (const name of ['ratelimit', 'ratelimit-policy', 'retry-after'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    expect(firstDenial(after).headers['retry-after']).toBe('900');
  });

  it('draft-6: the same RateLimit-Limit, -Remaining, -Reset and -Policy', async () => {
    const [before, after] = await sideBySide(
      { windowMs: 60_000, limit: 3, standardHeaders: 'draft-6', legacyHeaders: false },
      { limit: 3, per: '1m', algorithm: 'first_request_window', headers: 'draft-6' },
      4,
    );
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    expect(statuses(after)).toEqual(statuses(before));
  });

  it('legacy: the same X-RateLimit-Limit and -Remaining; -Reset the same Unix second, or one later', async () => {
    const [before, after] = await sideBySide(
      { windowMs: 60_000, limit: 3, standardHeaders: false, legacyHeaders: true },
      { limit: 3, per: '1m', algorithm: 'first_request_window', headers: 'legacy' },
      4,
    );
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining'])
      expect(headerOf(after, name)).toEqual(headerOf(before, name));
    const theirs = headerOf(before, 'x-ratelimit-reset').map(Number);
    const gaps = headerOf(after, 'x-ratelimit-reset').map(
      (reset, i) => Number(reset) - (theirs[i] ?? Number.NaN),
    );
    for (const gap of gaps) expect([0, 1]).toContain(gap);
  });

  it('the window starts at the first request: both allow again one window after it, not on the clock', async () => {
    const before = erl({ windowMs: 2000, limit: 2, standardHeaders: 'draft-7', legacyHeaders: false });
    const after = sluice({ logger: quiet, limit: 2, per: '2s', algorithm: 'first_request_window' });
    const [a, b] = await Promise.all([app(before), app(after)]);
    const first = await Promise.all([send(a, 3), send(b, 3)]);
    expect(first.map(statuses)).toEqual([
      [200, 200, 429],
      [200, 200, 429],
    ]);
    await sleep(2100);
    const again = await Promise.all([send(a, 1), send(b, 1)]);
    expect(again.map(statuses)).toEqual([[200], [200]]);
  });

  it("the default sliding_window denies at the same request; its Retry-After runs to the clock's window end plus window/limit", async () => {
    const [before, after] = await sideBySide(
      { windowMs: 15 * 60_000, limit: 5, standardHeaders: 'draft-7', legacyHeaders: false },
      { limit: 5, per: '15m', headers: 'draft-7' },
      6,
    );
    const deniedAt = Date.now();
    expect(statuses(after)).toEqual(statuses(before));
    expect(firstDenial(before).headers['retry-after']).toBe('900');
    // Windows on the clock (multiples of 15 min); the 5 counted requests weigh on the next window until a
    // fifth of it (900 s / 5) has passed.
    const windowEnd = Math.ceil(deniedAt / 900_000) * 900_000;
    const expected = (windowEnd - deniedAt) / 1000 + 900 / 5;
    expect(Math.abs(Number(firstDenial(after).headers['retry-after']) - expected)).toBeLessThanOrEqual(2);
  });
});

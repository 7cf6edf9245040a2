/**
 * The RateLimit field's `t` on allowed responses of the default sliding window, through real HTTP (Express):
 * at most the window `w` of RateLimit-Policy, never rising then falling between consecutive allowed responses
 * (a sliding window weighs a count for up to two windows; clients read `t` as the reset of `w`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rateLimit } from '@sluice/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const T = Date.UTC(2026, 10, 30, 12, 0, 0);
let now = T;
let server: Server;
let url: string;

beforeAll(async () => {
  const app = express();
  app.use(
    rateLimit({
      rules: {
        domain: 'reset_t',
        rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 6, per: '2s' } }],
      },
      clock: () => now,
      logger: { warn() {} },
    }),
  );
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** `r` and `t` of a RateLimit field. */
function fields(value: string | null): { r: number; t: number } {
  const match = /;r=(\d+);t=(\d+)$/.exec(value ?? '');
  if (match === null) throw new Error(`no RateLimit field: ${value}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

describe('RateLimit t of the default sliding window over HTTP', () => {
  it('stays within the window w on allowed responses and never rises then falls', async () => {
    const seen: { status: number; r: number; t: number; at: number }[] = [];
    // Requests every 250 ms for four windows: allowed ones, 429s, and allowed ones again.
    for (let i = 0; i < 32; i++) {
      now = T + 250 * i;
      const response = await fetch(url);
      await response.text();
      expect(response.headers.get('ratelimit-policy')).toBe('"per_ip";q=6;w=2');
      seen.push({ status: response.status, ...fields(response.headers.get('ratelimit')), at: now });
    }
    const allowed = seen.filter((s) => s.status === 200);
    expect(allowed.length).toBeGreaterThan(6);
    expect(seen.some((s) => s.status === 429)).toBe(true);
    for (const s of allowed) expect(s.t).toBeLessThanOrEqual(2);
    // Between consecutive responses, t only falls with the time passed or goes back up to at most w: never a
    // rise followed by a fall below where it was before the rise.
    for (let i = 2; i < allowed.length; i++) {
      const [a, b, c] = [allowed[i - 2]!, allowed[i - 1]!, allowed[i]!];
      if (b.t > a.t) expect(c.t).toBeGreaterThanOrEqual(a.t - Math.ceil((c.at - a.at) / 1000));
    }
    // A 429's t is its Retry-After.
    for (const s of seen.filter((x) => x.status === 429)) expect(s.t).toBeGreaterThanOrEqual(1);
  });
});

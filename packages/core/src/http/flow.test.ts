import { describe, expect, it } from 'vitest';
import type { RequestFacts } from './descriptors.js';
import { createHttpLimiter, type Verdict } from './flow.js';

const facts: RequestFacts = {
  ip: '203.0.113.7',
  method: 'get',
  url: '/search?q=1',
  header: () => undefined,
};
const rules = { rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 2, per: '1m' } }] };
const quiet = { warn: () => {} };

function allowed(verdict: Verdict | Promise<Verdict>): Verdict & { action: 'allow' } {
  expect(verdict).not.toBeInstanceOf(Promise);
  const settled = verdict as Verdict;
  if (settled.action !== 'allow') throw new Error(`expected allow, got ${settled.action}`);
  return settled;
}

describe('createHttpLimiter check', () => {
  it('decides in process without a promise and carries the headers', () => {
    const http = createHttpLimiter({ rules, logger: quiet });
    const verdict = allowed(http.check({}, facts));
    expect(verdict.headers['RateLimit-Policy']).toBe('"per_ip";q=2;w=60');
    // t: seconds until the sliding window is empty again (up to two windows).
    expect(verdict.headers.RateLimit).toMatch(/^"per_ip";r=1;t=\d+$/);
  });

  it('waits on a promise only when a hook is asynchronous', async () => {
    const http = createHttpLimiter({ rules, logger: quiet, skip: async () => false });
    const pending = http.check({}, facts);
    expect(pending).toBeInstanceOf(Promise);
    expect((await pending).action).toBe('allow');
  });

  it('counts a request once per limiter, however often it is checked, and never mixes two limiters', () => {
    const first = createHttpLimiter({ rules, logger: quiet });
    const second = createHttpLimiter({ rules, logger: quiet });
    const req = {};
    expect(allowed(first.check(req, facts)).decision.remaining).toBe(1);
    expect(first.check(req, facts)).toMatchObject({ action: 'skip' });
    expect(allowed(second.check(req, facts)).decision.remaining).toBe(1);
    expect(allowed(first.check({}, facts)).decision.remaining).toBe(0);
  });

  it('shows the more constrained of a global and a route decision in the headers', () => {
    const http = createHttpLimiter({ rules, logger: quiet });
    const route = http.routeScope({ name: 'search', key: ['ip'], limit: { requests: 100, per: '1m' } });
    const req = {};
    allowed(http.check(req, facts));
    const routeVerdict = allowed(http.check(req, facts, route));
    expect(routeVerdict.decision.rule).toBe('search');
    expect(routeVerdict.headers.RateLimit).toMatch(/^"per_ip";r=1;/);
  });
});

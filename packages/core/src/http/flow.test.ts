import { describe, expect, it } from 'vitest';
import type { RequestFacts } from '../request/descriptors.js';
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

describe('descriptors given to a decision observer', () => {
  type Seen = Record<string, string | undefined>;
  function check(onDecision: (...args: never[]) => void): void {
    allowed(createHttpLimiter({ rules, logger: quiet, observer: { onDecision } }).check({}, facts));
  }

  it('every built-in descriptor for an onDecision(decision, descriptors)', () => {
    let seen: Seen = {};
    check((_decision: unknown, descriptors: Seen) => {
      seen = descriptors;
    });
    expect(seen).toMatchObject({ ip: '203.0.113.7', method: 'GET' });
  });

  it('only those the rules read for an onDecision(decision): the rules here read ip alone', () => {
    let seen: Seen = {};
    // A one-parameter function still receives the descriptors: read through `arguments`, as the arity is the test.
    check(function (_decision: unknown) {
      // biome-ignore lint/complexity/noArguments: the declared arity is what is being tested
      seen = arguments[1] as Seen;
    });
    expect(seen.ip).toBe('203.0.113.7');
    expect(seen.method).toBeUndefined();
  });
});

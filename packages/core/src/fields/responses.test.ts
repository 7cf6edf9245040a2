import { describe, expect, it } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import { compileRules } from '../rules/compile.js';
import { deniedResponse, LOWER_CASE_NAMES, rateLimitHeaders, retryAfterSeconds } from './responses.js';

function result(overrides: Partial<RuleResult> = {}): RuleResult {
  return {
    rule: 'key_default',
    mode: 'enforce',
    allowed: false,
    limit: 600,
    remaining: 0,
    resetMs: 30_000,
    retryAfterMs: 16_200,
    windowMs: 60_000,
    shadowDenied: false,
    failed: false,
    ...overrides,
  };
}

function decision(overrides: Partial<Decision> = {}, results = [result()]): Decision {
  return {
    allowed: false,
    rule: 'key_default',
    retryAfterMs: 16_200,
    delayMs: 0,
    limit: 600,
    remaining: 0,
    resetMs: 30_000,
    failedOpen: false,
    reason: 'limit',
    results,
    leases: [],
    version: 'v1',
    ...overrides,
  };
}

describe('deniedResponse', () => {
  it('is a 429 with Retry-After rounded up, the rule, draft fields and the JSON body', () => {
    const denied = deniedResponse(decision(), 'draft');
    expect(denied.status).toBe(429);
    expect(denied.headers).toEqual({
      'RateLimit-Policy': '"key_default";q=600;w=60',
      RateLimit: '"key_default";r=0;t=17',
      'Retry-After': '17',
      'X-RateLimit-Rule': 'key_default',
      'Cache-Control': 'no-store',
    });
    expect(denied.body).toEqual({ error: 'rate_limited', rule: 'key_default', retryAfter: 17 });
  });

  it('asks for at least one second', () => {
    expect(retryAfterSeconds(decision({ retryAfterMs: 1 }))).toBe(1);
    expect(retryAfterSeconds(decision({ retryAfterMs: 0 }))).toBe(1);
    expect(retryAfterSeconds(decision({ retryAfterMs: 2000 }))).toBe(2);
  });

  it('leaves Retry-After out when no wait can help', () => {
    const denied = deniedResponse(decision({ retryAfterMs: Number.POSITIVE_INFINITY }), 'draft');
    expect(denied.headers['Retry-After']).toBeUndefined();
    expect(denied.headers.RateLimit).toBe('"key_default";r=0;t=30');
    expect(denied.body.retryAfter).toBeNull();
  });

  it('is a 503 when the denying rule failed closed on a store error', () => {
    const failed = result({ failed: true, retryAfterMs: 1000 });
    const denied = deniedResponse(decision({ reason: 'store_error', retryAfterMs: 1000 }, [failed]), 'none');
    expect(denied.status).toBe(503);
    expect(denied.body).toEqual({ error: 'rate_limit_unavailable', rule: 'key_default', retryAfter: 1 });
    expect(denied.headers).toEqual({
      'Retry-After': '1',
      'X-RateLimit-Rule': 'key_default',
      'Cache-Control': 'no-store',
    });
  });

  it('is a 429 when a store fallback counter denied during an outage: a counter said no', () => {
    const counted = result({ failed: true, fallback: true, retryAfterMs: 4200 });
    const denied = deniedResponse(decision({ reason: 'store_error', retryAfterMs: 4200 }, [counted]), 'none');
    expect(denied.status).toBe(429);
    expect(denied.body).toEqual({ error: 'rate_limited', rule: 'key_default', retryAfter: 5 });
    expect(denied.headers['Retry-After']).toBe('5');
  });
});

describe('rateLimitHeaders', () => {
  const shown = result({ allowed: true, remaining: 41, resetMs: 1500, retryAfterMs: 0 });
  const allowed = decision({ allowed: true, retryAfterMs: 0, remaining: 41, resetMs: 1500 }, [shown]);

  it('gives the shown rule in each format', () => {
    expect(rateLimitHeaders(allowed, 'draft')).toEqual({
      'RateLimit-Policy': '"key_default";q=600;w=60',
      RateLimit: '"key_default";r=41;t=2',
    });
    // Legacy reset: a Unix time in seconds, as express-rate-limit and GitHub send it.
    expect(rateLimitHeaders(allowed, 'legacy', undefined, () => 1_700_000_000_250)).toEqual({
      'X-RateLimit-Limit': '600',
      'X-RateLimit-Remaining': '41',
      'X-RateLimit-Reset': '1700000003',
    });
    expect(Object.keys(rateLimitHeaders(allowed, 'both'))).toHaveLength(5);
    expect(rateLimitHeaders(allowed, 'none')).toEqual({});
  });

  it('gives the draft 6 and 7 forms as express-rate-limit names them, alone or with legacy', () => {
    expect(rateLimitHeaders(allowed, 'draft-7')).toEqual({
      'RateLimit-Policy': '600;w=60',
      RateLimit: 'limit=600, remaining=41, reset=2',
    });
    expect(rateLimitHeaders(allowed, 'draft-6')).toEqual({
      'RateLimit-Policy': '600;w=60',
      'RateLimit-Limit': '600',
      'RateLimit-Remaining': '41',
      'RateLimit-Reset': '2',
    });
    expect(rateLimitHeaders(allowed, 'draft-8')).toEqual(rateLimitHeaders(allowed, 'draft'));
    expect(rateLimitHeaders(allowed, 'draft-8+legacy', undefined, () => 0)).toEqual(
      rateLimitHeaders(allowed, 'both', undefined, () => 0),
    );
    expect(Object.keys(rateLimitHeaders(allowed, 'draft-7+legacy'))).toEqual([
      'RateLimit-Policy',
      'RateLimit',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]);
    const quota = decision({ allowed: true }, [result({ windowMs: 0 })]);
    expect(rateLimitHeaders(quota, 'draft-6')['RateLimit-Policy']).toBe('600');
  });

  it('is empty when no rule applied', () => {
    expect(rateLimitHeaders(decision({ allowed: true, rule: undefined }, []), 'both')).toEqual({});
  });

  it('never shows a negative or fractional count, nor a negative time', () => {
    const odd = result({ allowed: true, remaining: -3.5, resetMs: -200, limit: 10.7 });
    expect(rateLimitHeaders(decision({ allowed: true }, [odd]), 'both', undefined, () => 5000)).toMatchObject(
      {
        RateLimit: '"key_default";r=0;t=0',
        'RateLimit-Policy': '"key_default";q=10;w=60',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '5',
      },
    );
  });

  it('shows the same rule of two tied results whatever their order', () => {
    const a = result({ rule: 'a_rule', allowed: true, limit: 10, remaining: 5, resetMs: 1000 });
    const b = result({ rule: 'b_rule', allowed: true, limit: 10, remaining: 5, resetMs: 1000 });
    const later = result({ rule: 'c_rule', allowed: true, limit: 10, remaining: 5, resetMs: 9000 });
    const ab = rateLimitHeaders(decision({ allowed: true }, [a, b]), 'draft');
    const ba = rateLimitHeaders(decision({ allowed: true }, [b, a]), 'draft');
    expect(ab).toEqual(ba);
    expect(ab.RateLimit).toMatch(/^"a_rule";/);
    // Equal room: the rule that resets later holds the client back longer.
    expect(rateLimitHeaders(decision({ allowed: true }, [a, later]), 'draft').RateLimit).toMatch(
      /^"c_rule";/,
    );
  });

  it('leaves the window out of a policy without one', () => {
    const quota = decision({ allowed: true }, [result({ windowMs: 0 })]);
    expect(rateLimitHeaders(quota, 'draft')['RateLimit-Policy']).toBe('"key_default";q=600');
  });
});

describe('RateLimit t of an allowed sliding-window decision', () => {
  it('is at most the window w, through the engine', async () => {
    let now = Date.UTC(2026, 10, 30, 12, 0, 0);
    const rules = compileRules({
      domain: 'reset_t',
      rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 6, per: '2s' } }],
    });
    const limiter = createLimiter({ rules, clock: () => now, logger: { warn() {} } });
    const resets: number[] = [];
    for (let i = 0; i < 6; i++) {
      now += 300;
      const decision = await limiter.check({ ip: '192.0.2.1' });
      expect(decision.allowed).toBe(true);
      const value = rateLimitHeaders(decision, 'draft').RateLimit ?? '';
      resets.push(Number(/;t=(\d+)$/.exec(value)?.[1]));
    }
    // The decision itself still says when the counter is empty (up to two windows): only the header is capped.
    expect(resets.every((t) => t >= 1 && t <= 2)).toBe(true);
    await limiter.close();
  });
});

describe('rate-limit header names in lower case (Fastify)', () => {
  it('names every field of every form in lower case, with the same values', () => {
    const allowed = decision({ allowed: true, reason: 'allowed' }, [result({ allowed: true, remaining: 7 })]);
    const clock = () => 1_700_000_000_000;
    for (const format of ['draft', 'both', 'legacy', 'draft-6+legacy', 'draft-7', 'draft-8'] as const) {
      const draft = rateLimitHeaders(allowed, format, undefined, clock);
      const lower = rateLimitHeaders(allowed, format, undefined, clock, LOWER_CASE_NAMES);
      const expected = Object.fromEntries(Object.entries(draft).map(([name, v]) => [name.toLowerCase(), v]));
      expect(Object.keys(draft).length).toBeGreaterThan(0);
      expect({ format, lower }).toEqual({ format, lower: expected });
    }
  });
});

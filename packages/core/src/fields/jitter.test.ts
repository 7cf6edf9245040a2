import { describe, expect, it } from 'vitest';
import type { Decision } from '../observe/contract.js';
import { compileRules } from '../rules/index.js';
import { jitteredSeconds, retryJitterOf } from './jitter.js';
import { deniedResponse, retryAfterSeconds } from './responses.js';

function denied(rule: string | undefined, retryAfterMs: number): Decision {
  return {
    allowed: false,
    ...(rule === undefined ? {} : { rule }),
    retryAfterMs,
    delayMs: 0,
    limit: 10,
    remaining: 0,
    resetMs: 60_000,
    failedOpen: false,
    reason: 'limit',
    results: [],
    leases: [],
    version: 'v1',
  };
}

const rules = compileRules({
  rules: [
    { name: 'smooth', key: ['ip'], limit: { requests: 10, per: '60s' }, retry_jitter: '10%' },
    { name: 'exact', key: ['ip'], limit: { requests: 10, per: '60s' } },
  ],
});

describe('jitteredSeconds', () => {
  it('lengthens the wait by up to the share, in whole seconds rounded up', () => {
    expect(jitteredSeconds(60_000, 0.1, 0)).toBe(60);
    expect(jitteredSeconds(60_000, 0.1, 0.5)).toBe(63);
    expect(jitteredSeconds(60_000, 0.1, 0.999_999)).toBe(66);
  });

  it('is never below the exact wait, nor below 1 second', () => {
    for (const exact of [1, 999, 1000, 1001, 59_001, 61_999]) {
      for (const random of [0, 0.3, 0.999]) {
        const seconds = jitteredSeconds(exact, 0.1, random);
        expect(seconds).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(exact / 1000)));
        expect(seconds).toBeLessThanOrEqual(Math.ceil((exact * 1.1) / 1000));
      }
    }
  });
});

describe('retryJitterOf', () => {
  it("reads the denying rule's share, from the route's rules first", () => {
    const route = compileRules({
      rules: [{ name: 'route_only', key: ['ip'], limit: { requests: 1, per: '1m' }, retry_jitter: '25%' }],
    });
    expect(retryJitterOf(denied('smooth', 5000), rules, undefined)).toBe(0.1);
    expect(retryJitterOf(denied('route_only', 5000), rules, route)).toBe(0.25);
    expect(retryJitterOf(denied('smooth', 5000), rules, route)).toBe(0.1);
  });

  it('is 0 for a rule without it, no rule, or a wait that never ends', () => {
    expect(retryJitterOf(denied('exact', 5000), rules, undefined)).toBe(0);
    expect(retryJitterOf(denied(undefined, 5000), rules, undefined)).toBe(0);
    expect(retryJitterOf(denied('smooth', Number.POSITIVE_INFINITY), rules, undefined)).toBe(0);
  });
});

describe('a denial with retry_jitter', () => {
  it('spreads Retry-After over [exact, exact + 10%], and the reset field says the same', () => {
    const values = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const response = deniedResponse(denied('smooth', 60_000), 'both', () => 0, 0.1);
      const seconds = Number(response.headers['Retry-After']);
      expect(seconds).toBeGreaterThanOrEqual(60);
      expect(seconds).toBeLessThanOrEqual(66);
      expect(response.body.retryAfter).toBe(seconds);
      expect(response.headers.RateLimit).toMatch(new RegExp(`;t=${seconds}$`));
      expect(response.headers['X-RateLimit-Reset']).toBe(String(seconds));
      values.add(seconds);
    }
    expect(values.size).toBeGreaterThan(3);
  });

  it('is exact without it (the default)', () => {
    expect(retryAfterSeconds(denied('exact', 60_000))).toBe(60);
    expect(deniedResponse(denied('exact', 60_000), 'draft').headers['Retry-After']).toBe('60');
    expect(retryAfterSeconds(denied('smooth', 60_000), 0.1, () => 0.5)).toBe(63);
  });
});

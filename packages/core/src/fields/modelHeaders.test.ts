import { describe, expect, it } from 'vitest';
import { createLimiter } from '../engine/engine.js';
import { compileRules } from '../rules/compile.js';
import { durationText } from './modelHeaders.js';
import { deniedResponse, rateLimitHeaders } from './responses.js';

const T = Date.UTC(2026, 11, 1, 12, 0, 0);
const limiter = () =>
  createLimiter({
    clock: () => T,
    rules: compileRules({
      rules: [
        { name: 'rpm', key: ['key'], algorithm: 'fixed_window', limit: { requests: 3, per: '1m' } },
        {
          name: 'tpm',
          key: ['key'],
          algorithm: 'gcra',
          limit: { requests: 1000, per: '1m' },
          cost: { descriptor: 'max_tokens', max: 1000 },
          settle: true,
        },
      ],
    }),
  });

describe('the model-API header form', () => {
  it('writes waits as model APIs do', () => {
    expect([0, 20, 999, 1000, 36_060, 360_000, 3_661_000].map(durationText)).toEqual([
      '0s',
      '20ms',
      '999ms',
      '1s',
      '37s',
      '6m0s',
      '1h1m1s',
    ]);
  });

  it('shows one set per budget kind, the settled rule as tokens; none in the other forms', async () => {
    const decision = await limiter().check({ key: 'k', max_tokens: '250' });
    const headers = rateLimitHeaders(decision, 'model', undefined, () => T);
    expect(headers).toEqual({
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '2',
      'x-ratelimit-reset-requests': '1m0s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '750',
      'x-ratelimit-reset-tokens': '15s',
    });
    expect(Object.keys(rateLimitHeaders(decision, 'draft+model'))).toContain('RateLimit');
    expect(Object.keys(rateLimitHeaders(decision, 'draft')).some((name) => name.startsWith('x-'))).toBe(
      false,
    );
  });

  it('a denied token budget shows its wait as its reset, beside Retry-After', async () => {
    const limits = limiter();
    const first = await limits.check({ key: 'k', max_tokens: '100' });
    await limits.settle(first, 1300);
    const denied = await limits.check({ key: 'k', max_tokens: '1' });
    const { headers } = deniedResponse(denied, 'model', () => T);
    expect(headers['x-ratelimit-remaining-tokens']).toBe('0');
    expect(headers['x-ratelimit-reset-tokens']).toBe('19s');
    expect(headers['Retry-After']).toBe('19');
  });
});

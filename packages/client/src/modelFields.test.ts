import { describe, expect, it } from 'vitest';
import { parseDuration, readModelBudget } from './modelFields.js';
import { readRateLimits } from './rateLimitFields.js';

const headersOf = (fields: Record<string, string>) => new Headers(fields);

describe('parseDuration', () => {
  it.each([
    ['120ms', 120],
    ['36s', 36_000],
    ['6m0s', 360_000],
    ['1h2m3s', 3_723_000],
    ['1.5s', 1500],
    ['17', 17_000],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'soon', '5x', '-3s', '1m 2s'])('%j is unreadable', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('readModelBudget', () => {
  const fields = {
    'x-ratelimit-limit-tokens': '40000',
    'x-ratelimit-remaining-tokens': '39000',
    'x-ratelimit-reset-tokens': '1.5s',
    'x-ratelimit-limit-requests': '60',
    'x-ratelimit-remaining-requests': '59',
    'x-ratelimit-reset-requests': '1s',
  };

  it('reads each kind', () => {
    const headers = headersOf(fields);
    expect(readModelBudget(headers, 'tokens')).toEqual({ limit: 40_000, remaining: 39_000, resetMs: 1500 });
    expect(readModelBudget(headers, 'requests')).toEqual({ limit: 60, remaining: 59, resetMs: 1000 });
  });

  it('is undefined when a field is missing or unreadable', () => {
    expect(
      readModelBudget(headersOf({ ...fields, 'x-ratelimit-reset-tokens': 'later' }), 'tokens'),
    ).toBeUndefined();
    expect(readModelBudget(headersOf({ 'x-ratelimit-limit-tokens': '5' }), 'tokens')).toBeUndefined();
    expect(
      readModelBudget(headersOf({ ...fields, 'x-ratelimit-remaining-tokens': 'x' }), 'tokens'),
    ).toBeUndefined();
  });

  it('the request fields pace requests when no other rate-limit field is there', () => {
    expect(readRateLimits(headersOf(fields), 0)).toEqual([
      { policy: 'requests', limit: 60, remaining: 59, resetMs: 1000 },
    ]);
    const ietf = { ...fields, ratelimit: '"per_key";r=5;t=30' };
    expect(readRateLimits(headersOf(ietf), 0)).toEqual([
      { policy: 'per_key', remaining: 5, resetMs: 30_000 },
    ]);
  });
});

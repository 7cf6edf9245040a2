import { describe, expect, it } from 'vitest';
import { ClientConfigError } from './errors.js';
import { resolveOptions } from './options.js';

describe('resolveOptions', () => {
  it('fills in the documented defaults', () => {
    const resolved = resolveOptions();
    expect(resolved).toMatchObject({
      maxAttempts: 3,
      maxWaitMs: 60_000,
      jitterMs: 1000,
      backoff: { baseMs: 500, capMs: 10_000 },
      retryBudget: { ratio: 0.1, reserve: 10 },
      pacing: true,
      graphql: false,
      idempotencyKey: false,
      attemptHeader: false,
      maxOrigins: 1000,
    });
    expect([...resolved.retryOn]).toEqual([429, 503]);
    expect(resolved.retryHeader).toBe('Retry-Attempt');
    expect(resolved.fetch).toBe(globalThis.fetch);
  });

  it('makes a UUID key per request with idempotencyKey: true', () => {
    const make = resolveOptions({ idempotencyKey: true }).idempotencyKey;
    expect(make).not.toBe(false);
    if (make === false) return;
    const [a, b] = [make(), make()];
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).not.toBe(b);
  });

  it.each([
    [{ maxAttempts: 0 }, 'maxAttempts must be a whole number >= 1'],
    [{ maxAttempts: 2.5 }, 'maxAttempts must be a whole number >= 1'],
    [{ maxWaitMs: -1 }, 'maxWaitMs must be a number >= 0'],
    [{ jitterMs: Number.NaN }, 'jitterMs must be a number >= 0'],
    [{ retryBudget: { ratio: 2 } }, 'retryBudget.ratio must be between 0 and 1'],
    [{ retryOn: [200] }, 'retryOn holds HTTP error statuses (400-599)'],
    [{ attemptHeader: 'bad header' }, 'attemptHeader must be a header name'],
    [{ retryHeader: 'bad header' }, 'retryHeader must be a header name or false'],
    [{ fetch: 'nope' }, 'fetch must be a function'],
    [{ estimate: 100 }, 'estimate must be a function'],
    [{ graphql: 'yes' }, 'graphql must be true or false'],
    [{ graphQL: true }, 'unknown option "graphQL" (did you mean "graphql"?)'],
    [{ estimates: () => 1 }, 'unknown option "estimates" (did you mean "estimate"?)'],
    [{ maxRetries: 2 }, 'unknown option "maxRetries"'],
    [{ maxattempts: 2 }, 'unknown option "maxattempts" (did you mean "maxAttempts"?)'],
    [{ maxWait: 5 }, 'unknown option "maxWait" (did you mean "maxWaitMs"?)'],
    [{ backoff: { baseMS: 5 } }, 'backoff: unknown option "baseMS" (did you mean "baseMs"?)'],
    [{ retryBudget: { ratios: 0.2 } }, 'retryBudget: unknown option "ratios" (did you mean "ratio"?)'],
    [{ events: { onRetry() {} } }, 'events: unknown option "onRetry"'],
  ])('rejects %j', (options, message) => {
    const attempt = () => resolveOptions(options as never);
    expect(attempt).toThrow(ClientConfigError);
    expect(attempt).toThrow(`@sluice/client: ${message}`);
  });
});

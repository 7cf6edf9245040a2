/** MIGRATING.md, rate-limiter-flexible: every claim of its section, run against rate-limiter-flexible itself. */
import { compileRules, createLimiter, type Limiter } from '@sluice/core';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { afterEach, describe, expect, it } from 'vitest';

const limiters: Limiter[] = [];
afterEach(async () => {
  await Promise.all(limiters.splice(0).map((limiter) => limiter.close()));
});

function sluice(algorithm?: 'first_request_window') {
  const limiter = createLimiter({
    rules: compileRules({
      domain: 'logins',
      rules: [
        {
          name: 'per_user',
          key: ['user'],
          limit: { requests: 3, per: '60s' },
          ...(algorithm ? { algorithm } : {}),
        },
      ],
    }),
  });
  limiters.push(limiter);
  return limiter;
}

/** consume(), as a user of rate-limiter-flexible reads it: allowed, remaining points, ms before next. */
async function consume(limiter: RateLimiterMemory, key: string): Promise<[boolean, number, number]> {
  try {
    const result = await limiter.consume(key);
    return [true, result.remainingPoints, 0];
  } catch (rejected) {
    if (!(rejected instanceof RateLimiterRes)) throw rejected;
    return [false, rejected.remainingPoints, rejected.msBeforeNext];
  }
}

describe('rate-limiter-flexible -> @sluice/core', () => {
  it('first_request_window: the same refusals and remaining points, retryAfterMs within a few ms of msBeforeNext', async () => {
    const before = new RateLimiterMemory({ points: 3, duration: 60 });
    const after = sluice('first_request_window');
    for (const user of ['alice', 'alice', 'alice', 'alice', 'bob']) {
      const [allowed, remaining, wait] = await consume(before, user);
      const decision = await after.check({ user });
      expect([decision.allowed, decision.remaining]).toEqual([allowed, remaining]);
      expect(Math.abs(decision.retryAfterMs - wait)).toBeLessThanOrEqual(50);
    }
  });

  it('the default sliding_window refuses the same request, its wait bounded by two windows', async () => {
    const before = new RateLimiterMemory({ points: 3, duration: 60 });
    const after = sluice();
    for (let i = 0; i < 4; i++) {
      const [allowed] = await consume(before, 'carol');
      const decision = await after.check({ user: 'carol' });
      expect(decision.allowed).toBe(allowed);
      if (!allowed) {
        expect(decision.retryAfterMs).toBeGreaterThan(0);
        expect(decision.retryAfterMs).toBeLessThanOrEqual(120_000);
      }
    }
  });
});

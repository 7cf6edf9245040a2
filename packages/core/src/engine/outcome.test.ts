import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { Lease } from '../store/contract.js';
import { createLimiter } from './engine.js';
import { counts, givenBackAtEnd, givenBackOnCancel } from './outcome.js';

const params = { limit: 5, windowMs: 60_000, burst: 5 };
const held: Lease = { rule: 'jobs', tag: 't', algorithm: 'concurrency', id: 'l1', scope: 'store' };
const place: Lease = {
  rule: 'queue',
  tag: 't',
  algorithm: 'leaky_bucket',
  id: '',
  scope: 'store',
  refund: { cost: 1, params },
};
const failedLogins: Lease = {
  rule: 'logins',
  tag: 't',
  algorithm: 'fixed_window',
  id: '',
  scope: 'store',
  refund: { cost: 1, params, at: 0, resetMs: 60_000, count: 'failed' },
};

describe('counting by outcome', () => {
  it('failed counts statuses from 400, succeeded those below, a list exactly its statuses', () => {
    expect([200, 302, 399, 400, 401, 500].map((status) => counts('failed', status))).toEqual([
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
    expect([200, 399, 400, 503].map((status) => counts('succeeded', status))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([401, 403, 429].map((status) => counts([401, 403], status))).toEqual([true, true, false]);
  });

  it('a response end gives back leases, and the charges of rules that do not count its status', () => {
    expect(givenBackAtEnd([held, place, failedLogins], 200)).toEqual([held, failedLogins]);
    expect(givenBackAtEnd([held, place, failedLogins], 401)).toEqual([held]);
  });

  it('an aborted request (no status) is charged; its leases still go back', () => {
    expect(givenBackAtEnd([held, failedLogins], undefined)).toEqual([held]);
  });

  it('a cancel gives queue places back, leases unless released already, and never a charge', () => {
    expect(givenBackOnCancel([held, place, failedLogins], false)).toEqual([held, place]);
    expect(givenBackOnCancel([held, place, failedLogins], true)).toEqual([place]);
  });
});

describe('counting by outcome through the limiter', () => {
  const T = Date.UTC(2026, 10, 30, 10, 0, 0);

  function limiterWith(rule: Record<string, unknown>) {
    const rules = compileRules({
      rules: [
        {
          name: 'logins',
          key: ['ip'],
          algorithm: 'fixed_window',
          limit: { requests: 2, per: '1m' },
          ...rule,
        },
      ],
    });
    return createLimiter({ rules, clock: () => T });
  }

  it('refunds a charge at most once, however often the response end is reported', async () => {
    const limiter = limiterWith({ count: 'failed' });
    const first = await limiter.check({ ip: '192.0.2.1' });
    await limiter.check({ ip: '192.0.2.1' }); // a second charge: a refund given twice would take it too
    await limiter.release(first, 200);
    await limiter.release(first, 200);
    await limiter.cancel(first);
    expect((await limiter.check({ ip: '192.0.2.1' })).remaining).toBe(0);
    expect((await limiter.check({ ip: '192.0.2.1' })).allowed).toBe(false);
  });

  it('keeps the charge of a counted status, of an aborted response and of a cancelled request', async () => {
    const limiter = limiterWith({ count: 'failed', limit: { requests: 3, per: '1m' } });
    const failed = await limiter.check({ ip: '192.0.2.2' });
    await limiter.release(failed, 401);
    const aborted = await limiter.check({ ip: '192.0.2.2' });
    await limiter.release(aborted);
    const cancelled = await limiter.check({ ip: '192.0.2.2' });
    await limiter.cancel(cancelled);
    expect((await limiter.check({ ip: '192.0.2.2' })).allowed).toBe(false);
  });

  it('refunds a local rule in the local store', async () => {
    const limiter = limiterWith({ count: 'succeeded', scope: 'local', limit: { requests: 1, per: '1m' } });
    const first = await limiter.check({ ip: '192.0.2.3' });
    expect(first.leases).toMatchObject([{ scope: 'local', refund: { count: 'succeeded', at: T } }]);
    await limiter.release(first, 500);
    expect((await limiter.check({ ip: '192.0.2.3' })).allowed).toBe(true);
  });

  it('a rule without count holds nothing, so its responses ask for nothing', async () => {
    const limiter = limiterWith({});
    expect((await limiter.check({ ip: '192.0.2.4' })).leases).toEqual([]);
  });
});

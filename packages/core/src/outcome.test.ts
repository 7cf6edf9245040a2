import { describe, expect, it } from 'vitest';
import { counts, givenBackAtEnd, givenBackOnCancel } from './outcome.js';
import type { Lease } from './types.js';

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

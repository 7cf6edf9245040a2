/** A store wrapper for tests of what goes back when responses end: it counts the release calls completed. */
import type { Lease, Store } from '@sluice/core/store';
import { expect } from 'vitest';

/** Counts the release calls it passed on (once each completed) and the `count` refunds among their leases. */
export class CountingStore implements Store {
  releases = 0;
  refunds = 0;
  constructor(readonly inner: Store) {}
  evaluate: Store['evaluate'] = (checks, now) => this.inner.evaluate(checks, now);
  async release(leases: readonly Lease[], now: number): Promise<void> {
    await this.inner.release(leases, now);
    this.refunds += leases.filter((lease) => lease.refund?.count !== undefined).length;
    this.releases += 1;
  }
  close = () => this.inner.close();
}

/** Waits until `check` holds (a refund lands just after the client has its response), then asserts it. */
export async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

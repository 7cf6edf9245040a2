import { describe, expect, it } from 'vitest';
import { StoreError } from '../base/errors.js';
import { withResilience } from '../resilience/resilientStore.js';
import { compileRules } from '../rules/compile.js';
import type { Check, CheckResult, Lease, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { createLimiter } from './engine.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const rules = compileRules({
  rules: [
    {
      name: 'exports',
      key: ['user'],
      algorithm: 'concurrency',
      limit: { concurrent: 5000, lease: '30s' },
    },
  ],
});

/** A real MemoryStore behind a remote-looking store: answers held until `answerAll()`, release can hang. */
class RemoteStore implements Store {
  readonly inner = new MemoryStore();
  readonly held: (() => void)[] = [];
  hold = false;
  hangReleases = false;
  down = false;
  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    if (this.down) return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'connection refused'));
    if (!this.hold) return this.inner.evaluate(checks, now);
    return new Promise((resolve) => this.held.push(() => resolve(this.inner.evaluate(checks, now))));
  }
  release(leases: readonly Lease[], now: number): Promise<void> {
    return this.hangReleases ? new Promise(() => {}) : this.inner.release(leases, now);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  answerAll(): void {
    for (const answer of this.held.splice(0)) answer();
  }
}

describe('the engine around a store of yours (core resilience wrapper)', () => {
  it('bounds a release that never settles by the time limit, as it bounds evaluate', async () => {
    const store = new RemoteStore();
    const limiter = createLimiter({ rules, store, clock: () => T0, timeoutMs: 20 });
    const decision = await limiter.check({ user: 'u' });
    expect(decision.leases).toHaveLength(1);
    store.hangReleases = true;
    const released = await Promise.race([
      limiter.release(decision).then(() => 'settled'),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 5_000).unref()),
    ]);
    expect(released).toBe('settled');
  });

  it('puts no bound on calls in flight (1,500 at once all reach the store and are answered)', async () => {
    const store = new RemoteStore();
    store.hold = true;
    const limiter = createLimiter({ rules, store, clock: () => T0, timeoutMs: 60_000 });
    const checks = Array.from({ length: 1500 }, (_, i) => limiter.check({ user: `u${i % 10}` }));
    expect(store.held).toHaveLength(1500);
    expect(limiter.health().pending).toBe(1500);
    store.answerAll();
    const decisions = await Promise.all(checks);
    expect(decisions.every((d) => d.allowed && !d.failedOpen)).toBe(true);
    expect(limiter.health().pending).toBe(0);
  });

  it("tells the limiter's logger once when the store keeps failing, and once when it answers again", async () => {
    const lines: string[] = [];
    const store = new RemoteStore();
    const limiter = createLimiter({ rules, store, clock: () => T0, logger: { warn: (l) => lines.push(l) } });
    store.down = true;
    for (let i = 0; i < 8; i++) expect((await limiter.check({ user: 'u' })).failedOpen).toBe(true);
    store.down = false;
    expect((await limiter.check({ user: 'u' })).failedOpen).toBe(false);
    await limiter.check({ user: 'u' });
    expect(lines.map((line) => line.match(/\[(\w+)\]$/)?.[1])).toEqual([
      'SLUICE_STORE_UNREACHABLE',
      'SLUICE_STORE_RECOVERED',
    ]);
  });
});

describe('withResilience', () => {
  const plain: Store = {
    evaluate: () => Promise.resolve([]),
    release: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };

  it('leaves a store that answers in process (evaluateNow) or bounds its own calls as it is', () => {
    const memory = new MemoryStore();
    const inProcess = { ...plain, evaluateNow: () => [] };
    const bounded = { ...plain, timeLimited: true };
    expect(withResilience(memory)).toBe(memory);
    expect(withResilience(inProcess)).toBe(inProcess);
    expect(withResilience(bounded)).toBe(bounded);
  });

  it('wraps any other store: its calls then settle within the time limit', async () => {
    const silent: Store = { ...plain, evaluate: () => new Promise(() => {}) };
    const wrapped = withResilience(silent, { timeoutMs: 10, breaker: false });
    expect(wrapped).not.toBe(silent);
    expect(wrapped.timeLimited).toBe(true);
    const check: Check = {
      rule: 'r',
      tag: 't',
      algorithm: 'fixed_window',
      params: { limit: 1, windowMs: 1000, burst: 1 },
      cost: 1,
      mode: 'enforce',
    };
    await expect(wrapped.evaluate([check], T0)).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_TIMEOUT' });
  });
});

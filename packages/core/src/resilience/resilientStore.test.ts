import { describe, expect, it } from 'vitest';
import type { Check, CheckResult, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { BUSY_QUIET_MS } from './monitor.js';
import { resilientStore } from './resilientStore.js';

const T0 = Date.UTC(2026, 11, 5, 12, 0, 0);
const check: Check = {
  rule: 'r',
  tag: 't',
  algorithm: 'fixed_window',
  params: { limit: 1_000_000, windowMs: 60_000, burst: 1_000_000 },
  cost: 1,
  mode: 'enforce',
};

/** A real MemoryStore whose answers wait until `answerAll()`: a store that is behind, not down. */
class SlowStore implements Store {
  readonly inner = new MemoryStore();
  readonly held: (() => void)[] = [];
  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return new Promise((resolve) => this.held.push(() => resolve(this.inner.evaluate(checks, now))));
  }
  release(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  answerAll(): void {
    for (const answer of this.held.splice(0)) answer();
  }
}

/** The notice codes logged, in order. */
const codes = (lines: readonly string[]) => lines.map((line) => line.match(/\[(\w+)\]$/)?.[1]);

describe('a store behind its pending bound', () => {
  it('fails the excess open under one busy notice, keeps the breaker shut, and says when it caught up', async () => {
    const lines: string[] = [];
    const slow = new SlowStore();
    const store = resilientStore(slow, {
      name: 'Test',
      timeoutMs: 60_000,
      maxPending: 2,
      breaker: { failures: 2, cooldownMs: 60_000 },
      logger: { warn: (line) => lines.push(line) },
    });
    // Ten requests refused at the bound while two wait: more refusals than the breaker's threshold.
    const waiting = [store.evaluate([check], T0), store.evaluate([check], T0)];
    const refused = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => store.evaluate([check], T0 + i)),
    );
    expect(refused.every((r) => r.status === 'rejected')).toBe(true);
    expect(codes(lines)).toEqual(['SLUICE_STORE_BUSY']);
    expect(lines[0]).toContain('2 Test requests already pending');
    slow.answerAll();
    await Promise.all(waiting);

    // Answered within the quiet time: still the same episode. The breaker never opened: calls reach the store.
    const soon = store.evaluate([check], T0 + 10);
    expect(slow.held).toHaveLength(1);
    slow.answerAll();
    await soon;
    expect(codes(lines)).toEqual(['SLUICE_STORE_BUSY']);

    const later = store.evaluate([check], T0 + 9 + BUSY_QUIET_MS);
    slow.answerAll();
    await later;
    expect(codes(lines)).toEqual(['SLUICE_STORE_BUSY', 'SLUICE_STORE_CAUGHT_UP']);
    expect(lines[1]).toContain(`after ${9 + BUSY_QUIET_MS} ms, 10 requests failed open at the bound`);
    expect(store.health().breaker).toBe('closed');
  });
});

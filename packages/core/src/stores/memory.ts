import { type ConcurrencyState, releaseLease } from '../algorithms/concurrency.js';
import { decideByName } from '../algorithms/index.js';
import { type LeakyBucketState, refundLeaky } from '../algorithms/leakyBucket.js';
import type { Check, CheckResult, Lease, Outcome, Store } from '../types.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Most counters kept; the least recently used is evicted first. Default 1,000,000. */
  maxKeys?: number;
}

interface Entry {
  state: unknown;
  expiresAt: number;
}

/**
 * Counters in this process: a Map used as an LRU (insertion order = recency), bounded by `maxKeys`.
 * O(1) per check; expiry is lazy (an expired entry reads as absent), so there is no timer per key and
 * nothing keeps the process alive.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, Entry>();
  readonly #maxKeys: number;

  constructor(options: MemoryStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError('maxKeys must be a positive integer');
    this.#maxKeys = maxKeys;
  }

  /** Number of counters held (expired ones included until touched or evicted). */
  get size(): number {
    return this.#entries.size;
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    const outcomes: Outcome<unknown>[] = [];
    let blocked = false;
    for (const check of checks) {
      const outcome = this.#decide(check, now);
      outcomes.push(outcome);
      if (!outcome.allowed && check.mode === 'enforce') blocked = true;
    }
    if (!blocked) {
      outcomes.forEach((outcome, i) => {
        if (outcome.allowed) this.#write(counterKey(checks[i]!), outcome.state, now + outcome.ttlMs);
      });
    }
    return Promise.resolve(outcomes.map(toResult));
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    for (const lease of leases) {
      const key = counterKey(lease);
      const entry = this.#read(key, now);
      if (entry === undefined) continue;
      if (lease.refund) {
        const { cost, params } = lease.refund;
        const refunded = refundLeaky(entry.state as LeakyBucketState, now, params, cost);
        entry.state = refunded.state;
        entry.expiresAt = now + refunded.ttlMs;
      } else if (Array.isArray((entry.state as Partial<ConcurrencyState>).leases)) {
        entry.state = releaseLease(entry.state as ConcurrencyState, lease.id, now);
      }
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    return Promise.resolve();
  }

  #decide(check: Check, now: number): Outcome<unknown> {
    const state = this.#read(counterKey(check), now)?.state;
    return decideByName(check.algorithm, state, now, check.params, check.cost, check.leaseId);
  }

  #read(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    // Every read counts as a use, so a key kept busy by denied requests is not evicted (and reset).
    this.#entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.#entries.set(key, entry);
    return entry;
  }

  #write(key: string, state: unknown, expiresAt: number): void {
    const entries = this.#entries;
    const entry = entries.get(key);
    if (entry !== undefined) {
      // Already moved to the most recently used end by the read of this evaluation.
      entry.state = state;
      entry.expiresAt = expiresAt;
      return;
    }
    entries.set(key, { state, expiresAt });
    if (entries.size > this.#maxKeys) entries.delete(entries.keys().next().value as string);
  }
}

function counterKey(id: { rule: string; tag: string }): string {
  return `${id.rule}:${id.tag}`;
}

function toResult(outcome: Outcome<unknown>): CheckResult {
  const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs } = outcome;
  return delayMs === undefined
    ? { allowed, limit, remaining, resetMs, retryAfterMs }
    : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs };
}

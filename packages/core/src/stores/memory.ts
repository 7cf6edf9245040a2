import { type ConcurrencyState, releaseLease } from '../algorithms/concurrency.js';
import { decideByName } from '../algorithms/index.js';
import { type LeakyBucketState, refundLeaky } from '../algorithms/leakyBucket.js';
import type { Check, CheckResult, Lease, Outcome, Store } from '../types.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** Most counters kept; the least recently used is evicted first. Default 1,000,000. */
  maxKeys?: number;
}

const NONE = -1;
const FIRST_CAPACITY = 1024;

/**
 * Counters in this process, bounded by `maxKeys` with least-recently-used eviction; every check counts as
 * a use. O(1) per check; expiry is lazy (an expired entry reads as absent), so there is no timer per key
 * and nothing keeps the process alive.
 *
 * Layout, for memory (under 200 bytes per sliding_window key): one Map per rule from the counter tag (the
 * string the engine already made, so no key string is built per check) to a slot number; per slot, the
 * state, expiry and LRU links live in parallel arrays (expiry and links unboxed in typed arrays), so an
 * entry has no wrapper object, and a use moves two links instead of deleting and re-inserting a Map entry.
 */
export class MemoryStore implements Store {
  readonly #byRule = new Map<string, Map<string, number>>();
  readonly #maxKeys: number;
  #capacity = 0;
  /** Per slot: its tag and its rule's map (to forget it on eviction), its state and expiry. */
  #tags: (string | undefined)[] = [];
  #maps: (Map<string, number> | undefined)[] = [];
  #states: unknown[] = [];
  #expiresAt = new Float64Array(0);
  /** LRU list: `#head` most recently used; NONE ends the list. Dropped slots wait in a free list linked through `#older`. */
  #newer = new Int32Array(0);
  #older = new Int32Array(0);
  #head = NONE;
  #tail = NONE;
  #free = NONE;
  #size = 0;
  #used = 0;

  constructor(options: MemoryStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError('maxKeys must be a positive integer');
    this.#maxKeys = maxKeys;
  }

  /** Number of counters held (expired ones included until touched or evicted). */
  get size(): number {
    return this.#size;
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    return Promise.resolve(this.evaluateNow(checks, now).map(toResult));
  }

  /**
   * `evaluate` without the promise, for in-process callers (the engine) that need not wait for anything.
   * No copy is made: each result is the algorithm's outcome, which also holds the counter's new state.
   * Read it, never change it.
   */
  evaluateNow(checks: readonly Check[], now: number): CheckResult[] {
    const outcomes: Outcome<unknown>[] = new Array(checks.length);
    let blocked = false;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const slot = this.#find(check, now);
      const state = slot === NONE ? undefined : this.#states[slot];
      const outcome = decideByName(check.algorithm, state, now, check.params, check.cost, check.leaseId);
      outcomes[i] = outcome;
      if (!outcome.allowed && check.mode === 'enforce') blocked = true;
    }
    for (let i = 0; i < checks.length; i++) {
      const outcome = outcomes[i]!;
      if (!blocked && outcome.allowed) this.#write(checks[i]!, outcome.state, now + outcome.ttlMs);
    }
    // An outcome is a CheckResult with its state and TTL besides: no copy per check.
    return outcomes;
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    for (const lease of leases) {
      const slot = this.#find(lease, now);
      if (slot === NONE) continue;
      const state = this.#states[slot];
      if (lease.refund) {
        const { cost, params } = lease.refund;
        const refunded = refundLeaky(state as LeakyBucketState, now, params, cost);
        this.#states[slot] = refunded.state;
        this.#expiresAt[slot] = now + refunded.ttlMs;
      } else if (Array.isArray((state as Partial<ConcurrencyState>).leases)) {
        this.#states[slot] = releaseLease(state as ConcurrencyState, lease.id, now);
      }
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#byRule.clear();
    this.#capacity = 0;
    this.#tags = [];
    this.#maps = [];
    this.#states = [];
    this.#expiresAt = new Float64Array(0);
    this.#newer = new Int32Array(0);
    this.#older = new Int32Array(0);
    this.#head = this.#tail = this.#free = NONE;
    this.#size = this.#used = 0;
    return Promise.resolve();
  }

  /** The live slot of a counter, made the most recently used; an expired one is dropped (NONE). */
  #find(id: { rule: string; tag: string }, now: number): number {
    const slot = this.#byRule.get(id.rule)?.get(id.tag);
    if (slot === undefined) return NONE;
    if (this.#expiresAt[slot]! <= now) {
      this.#drop(slot);
      return NONE;
    }
    this.#touch(slot);
    return slot;
  }

  #write(check: Check, state: unknown, expiresAt: number): void {
    let map = this.#byRule.get(check.rule);
    if (map === undefined) {
      map = new Map();
      this.#byRule.set(check.rule, map);
    }
    let slot = map.get(check.tag);
    if (slot === undefined) {
      slot = this.#allocate();
      map.set(check.tag, slot);
      this.#tags[slot] = check.tag;
      this.#maps[slot] = map;
      this.#pushHead(slot);
    }
    // An existing slot was already made the most recently used by the read of this evaluation.
    this.#states[slot] = state;
    this.#expiresAt[slot] = expiresAt;
  }

  /** A free slot: a dropped one, a new one, or the least recently used one, evicted. */
  #allocate(): number {
    if (this.#free !== NONE) {
      const slot = this.#free;
      this.#free = this.#older[slot]!;
      this.#size++;
      return slot;
    }
    if (this.#used < this.#maxKeys) {
      if (this.#used === this.#capacity) this.#grow();
      this.#size++;
      return this.#used++;
    }
    const slot = this.#tail;
    this.#unlink(slot);
    this.#forget(slot);
    return slot;
  }

  #drop(slot: number): void {
    this.#unlink(slot);
    this.#forget(slot);
    this.#older[slot] = this.#free;
    this.#free = slot;
    this.#size--;
  }

  /** Removes a slot's counter from its rule's map and lets its state go. */
  #forget(slot: number): void {
    this.#maps[slot]!.delete(this.#tags[slot]!);
    this.#tags[slot] = undefined;
    this.#maps[slot] = undefined;
    this.#states[slot] = undefined;
  }

  #touch(slot: number): void {
    if (slot === this.#head) return;
    this.#unlink(slot);
    this.#pushHead(slot);
  }

  #pushHead(slot: number): void {
    this.#newer[slot] = NONE;
    this.#older[slot] = this.#head;
    if (this.#head !== NONE) this.#newer[this.#head] = slot;
    this.#head = slot;
    if (this.#tail === NONE) this.#tail = slot;
  }

  #unlink(slot: number): void {
    const newer = this.#newer[slot]!;
    const older = this.#older[slot]!;
    if (newer === NONE) this.#head = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#tail = newer;
    else this.#newer[older] = newer;
  }

  /** Doubles the slot arrays, up to maxKeys. */
  #grow(): void {
    const capacity = Math.min(this.#maxKeys, Math.max(FIRST_CAPACITY, this.#capacity * 2));
    const grown = <T extends Float64Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.#expiresAt = grown(this.#expiresAt, (n) => new Float64Array(n));
    this.#newer = grown(this.#newer, (n) => new Int32Array(n));
    this.#older = grown(this.#older, (n) => new Int32Array(n));
    this.#capacity = capacity;
  }
}

/** A result holding only CheckResult's fields: an outcome's state must not leave the store. */
function toResult(outcome: CheckResult): CheckResult {
  const { allowed, limit, remaining, resetMs, retryAfterMs, delayMs } = outcome;
  return delayMs === undefined
    ? { allowed, limit, remaining, resetMs, retryAfterMs }
    : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs };
}

import { ConfigError } from '../base/errors.js';
import { checkOptionNames } from '../base/optionNames.js';
import { type AuditLog, MemoryAuditLog } from './audit.js';
import { type Board, MemoryBoard } from './board.js';
import type { Check, CheckResult, FactorReport, Lease, SlotHint, Store, StoreHealth } from './contract.js';
import {
  banKey,
  evaluateOutcomes,
  releaseLeases,
  renewLeases,
  type StateTable,
  toResult,
} from './evaluate.js';
import { MemoryFactors } from './memoryFactors.js';
import { addPages, PAGE_SIZE, pageBits } from './pages.js';
import { NONE as LIST_END, protectedLimit, SegmentedLru } from './segmentedLru.js';
import { SlotIndex } from './slotIndex.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most counters kept. When full, a new counter evicts the least recently used counter that was used only
   * once; a counter used twice or denied goes only after 80% of maxKeys other counters were used twice since
   * its last use. Default 1,000,000.
   */
  maxKeys?: number;
}

/** PAGE_SIZE slots: state and expiry (Infinity while the slot is free). */
interface SlotPage {
  readonly states: unknown[];
  readonly expiresAt: Float64Array;
  /** The next free slot, for free slots. */
  readonly nextFree: Int32Array;
}

function slotPage(): SlotPage {
  return {
    states: [], // grown as slots are taken (in order, so it stays packed): a small store stays small
    expiresAt: new Float64Array(PAGE_SIZE),
    nextFree: new Int32Array(PAGE_SIZE),
  };
}

/** Slots a call looks at for expired counters: bounded work per call, the whole store swept in turn. */
export const SWEEP_PER_CALL = 8;

const { BITS, MASK } = pageBits();
// Read once: under a loader that turns imports into getters (tsx), an imported constant costs a call per use.
const NONE: number = LIST_END;

/**
 * Counters in this process, bounded by `maxKeys`. Every call does O(1) work at any key count: it looks up
 * its counters and checks {@link SWEEP_PER_CALL} slots for expired counters, dropping those (none
 * while the clock is before the earliest expiry the sweep saw: nothing can have expired). There is no
 * timer per key and nothing keeps the process alive.
 *
 * Eviction is a segmented LRU: a new counter is on probation; a second use (a denial is always at least
 * the second) protects it. The victim is the least recently used counter on probation, so a flood of fresh
 * keys evicts only fresh keys and never frees a client that is limited (see {@link SegmentedLru}).
 *
 * Layout, for memory (about 200 bytes per sliding_window key): the counter tag (the string the engine
 * already made, so no key string is built per check) maps to a slot number through small Maps
 * ({@link SlotIndex}: a big Map stalls the loop when V8 rebuilds it); per slot, the state, expiry and links
 * live in parallel arrays (numbers unboxed in typed arrays), so an entry has no wrapper object, in pages
 * made as needed (never one big array to copy).
 */
export class MemoryStore implements Store, StateTable {
  readonly #maxKeys: number;
  readonly #index: SlotIndex;
  readonly #lru: SegmentedLru;
  #pages: SlotPage[] = [];
  /** Free slots below `#used`, linked through their `nextFree`. */
  #free = NONE;
  #size = 0;
  #used = 0;
  /** Next slot the sweep looks at. */
  #cursor = 0;
  /**
   * No counter expires before this time: the earliest expiry of the sweep's last full pass over the slots
   * and of every expiry set since, so the sweep can rest until the clock reaches it.
   */
  #quietUntil = Number.POSITIVE_INFINITY;
  /** The earliest expiry seen in the sweep's current pass (looked at or set since it began). */
  #passEarliest = Number.POSITIVE_INFINITY;
  #swept = 0;
  #evictions = 0;
  /** The slots `get` found in the call being evaluated (reused from call to call; past 16, looked up again). */
  readonly #found = new Int32Array(16);
  #gets = 0;
  /** The clock of the call being evaluated. */
  #now = 0;

  constructor(options: MemoryStoreOptions = {}) {
    checkOptionNames('MemoryStore', options, ['maxKeys'] satisfies (keyof MemoryStoreOptions)[]);
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) {
      throw new ConfigError(`maxKeys must be a positive integer, got ${String(maxKeys)}`);
    }
    this.#maxKeys = maxKeys;
    this.#index = new SlotIndex();
    this.#lru = new SegmentedLru(protectedLimit(maxKeys));
  }

  /** Number of counters held (expired ones included until swept, read or evicted). */
  get size(): number {
    return this.#size;
  }

  /** Slots the expiry sweep has looked at so far (it rests while no counter can have expired). */
  get swept(): number {
    return this.#swept;
  }

  /** Keys held and evictions so far; a MemoryStore is always connected and has nothing pending. */
  /** Adaptive factors, shared by the limiters that use this store. */
  readonly #factors = new MemoryFactors();
  /** The gateways' boards of heavy hitters, in process (store/board.ts). */
  readonly board: Board = new MemoryBoard();
  /** The audit trail, in process: the newest 10,000 entries. */
  readonly audit: AuditLog = new MemoryAuditLog();

  /** Folds a gateway's outcomes into an adaptive rule's factor (adaptive/aimd.ts); answers at once. */
  adaptFactor(report: FactorReport, now: number): number {
    return this.#factors.adaptFactor(report, now);
  }

  health(): StoreHealth {
    return { connected: true, breaker: 'closed', pending: 0, keys: this.#size, evictions: this.#evictions };
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
    this.#sweep(now);
    this.#begin(now);
    return evaluateOutcomes(checks, now, this);
  }

  /**
   * StateTable (evaluate.ts), during a call: the live state of a key at the call's `now`, counted as a use.
   * The slot found is remembered, so that `set` of the same key finds it without a lookup, and written to
   * `hint`, so that the tag's next check finds it without one.
   */
  get(rule: string, tag: string, hint?: SlotHint): unknown {
    const slot = this.#find(rule, tag, this.#now, hint);
    if (slot === NONE) return undefined;
    if (this.#gets < this.#found.length) this.#found[this.#gets++] = slot;
    return this.#page(slot).states[slot & MASK];
  }

  /** StateTable (evaluate.ts), during a call: sets a key's state; `expiresAt` undefined keeps its expiry. */
  set(rule: string, tag: string, state: unknown, expiresAt: number | undefined, hint?: SlotHint): void {
    let slot = this.#foundSlot(rule, tag);
    if (slot === NONE) {
      slot = this.#allocate();
      this.#index.add(rule, tag, slot);
      this.#lru.insert(slot);
      // The new slot heads the tag's chain: from it, every counter of the tag is found.
      if (hint !== undefined) hint.slot = slot;
    }
    const page = this.#page(slot);
    page.states[slot & MASK] = state;
    if (expiresAt !== undefined) this.#expireAt(page, slot & MASK, expiresAt);
  }

  /** Starts a call at `now`: `get` and `set` read the clock from here. */
  #begin(now: number): void {
    this.#now = now;
    this.#gets = 0;
  }

  /**
   * The slot of a key `get` found in this call, checked (a new key set since may have evicted it), else looked
   * up; NONE when the key has none.
   */
  #foundSlot(rule: string, tag: string): number {
    for (let i = 0; i < this.#gets; i++) {
      const slot = this.#found[i]!;
      if (this.#index.holds(slot, rule, tag)) return slot;
    }
    return this.#index.find(rule, tag);
  }

  /**
   * Lifts a key's ban under a rule (its violations and escalation level go too); true when it had that
   * state. The next request of the key is decided by the rule's limit alone.
   */
  unban(rule: string, tag: string): Promise<boolean> {
    const id = banKey(rule, tag);
    const slot = this.#index.find(id.rule, id.tag);
    if (slot !== NONE) this.#drop(slot);
    return Promise.resolve(slot !== NONE);
  }

  release(leases: readonly Lease[], now: number): Promise<void> {
    this.#begin(now);
    releaseLeases(leases, now, this);
    return Promise.resolve();
  }

  /** Extends the concurrency leases still held (a long-lived connection's heartbeat). */
  renew(leases: readonly Lease[], now: number): Promise<number> {
    this.#begin(now);
    return Promise.resolve(renewLeases(leases, now, this));
  }

  close(): Promise<void> {
    this.#index.clear();
    this.#lru.clear();
    this.#pages = [];
    this.#free = NONE;
    this.#size = this.#used = this.#cursor = 0;
    this.#quietUntil = this.#passEarliest = Number.POSITIVE_INFINITY;
    return Promise.resolve();
  }

  /** The live slot of a counter, counted as a use; an expired one is dropped (NONE). */
  #find(rule: string, tag: string, now: number, hint: SlotHint | undefined): number {
    const slot = this.#lookUp(rule, tag, hint);
    if (slot === NONE) return NONE;
    if (this.#page(slot).expiresAt[slot & MASK]! <= now) {
      this.#drop(slot);
      return NONE;
    }
    this.#lru.use(slot);
    return slot;
  }

  /** The slot of a counter, found from the hint when it still leads there, else in the index (then hinted). */
  #lookUp(rule: string, tag: string, hint: SlotHint | undefined): number {
    if (hint === undefined) return this.#index.find(rule, tag);
    const near = this.#index.findNear(hint.slot, rule, tag);
    if (near !== NONE) return near;
    const slot = this.#index.find(rule, tag);
    if (slot !== NONE) hint.slot = slot;
    return slot;
  }

  /** Drops the expired counters among the next few slots, so that dead keys go without being read again. */
  #sweep(now: number): void {
    if (now < this.#quietUntil) return;
    let cursor = this.#cursor;
    let earliest = this.#passEarliest;
    const end = Math.min(SWEEP_PER_CALL, this.#used);
    for (let n = 0; n < end; n++) {
      if (cursor >= this.#used) {
        // A pass is complete: every live counter's expiry was seen in it or set since.
        this.#quietUntil = earliest;
        earliest = Number.POSITIVE_INFINITY;
        cursor = 0;
      }
      const expiresAt = this.#page(cursor).expiresAt[cursor & MASK]!;
      if (expiresAt <= now) this.#drop(cursor);
      else if (expiresAt < earliest) earliest = expiresAt;
      cursor++;
    }
    this.#cursor = cursor;
    this.#passEarliest = earliest;
    this.#swept += end;
  }

  /** Sets a slot's expiry, keeping the sweep's resting time no later than it. */
  #expireAt(page: SlotPage, at: number, expiresAt: number): void {
    page.expiresAt[at] = expiresAt;
    if (expiresAt < this.#passEarliest) this.#passEarliest = expiresAt;
    if (expiresAt < this.#quietUntil) this.#quietUntil = expiresAt;
  }

  /** A free slot: a dropped one, a new one, or the eviction victim. */
  #allocate(): number {
    if (this.#free !== NONE) {
      const slot = this.#free;
      this.#free = this.#page(slot).nextFree[slot & MASK]!;
      this.#size++;
      return slot;
    }
    if (this.#used < this.#maxKeys) {
      if ((this.#used & MASK) === 0) this.#addPage();
      this.#size++;
      return this.#used++;
    }
    const slot = this.#lru.victim();
    this.#lru.remove(slot);
    this.#forget(slot);
    this.#evictions++;
    return slot;
  }

  #drop(slot: number): void {
    this.#lru.remove(slot);
    this.#forget(slot);
    this.#page(slot).nextFree[slot & MASK] = this.#free;
    this.#free = slot;
    this.#size--;
  }

  /** Removes a slot's counter from the index and lets its state go. */
  #forget(slot: number): void {
    this.#index.remove(slot);
    const page = this.#page(slot);
    page.states[slot & MASK] = undefined;
    page.expiresAt[slot & MASK] = Number.POSITIVE_INFINITY;
  }

  /** Makes the page of the next new slot, `#used`. */
  #addPage(): void {
    addPages(this.#pages, this.#used + 1, slotPage);
    this.#lru.grow(this.#used + 1);
    this.#index.grow(this.#used + 1);
  }

  #page(slot: number): SlotPage {
    return this.#pages[slot >>> BITS]!;
  }
}

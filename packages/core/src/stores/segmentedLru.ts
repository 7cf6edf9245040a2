/** Ends a list. */
export const NONE = -1;

const PROBATION = 0;
const PROTECTED = 1;

/** Share of the slots the protected segment may hold; the rest stays for one-hit keys. */
export const PROTECTED_SHARE = 0.8;

/** The most slots the protected segment of a store of `maxKeys` holds. */
export function protectedLimit(maxKeys: number): number {
  return Math.max(1, Math.floor(maxKeys * PROTECTED_SHARE));
}

/**
 * Recency order of slot numbers in two segments (a segmented LRU): a slot starts in probation; a second use
 * moves it to protected, whose overflow moves back to probation. The victim is probation's least recently
 * used slot, so a flood of one-hit keys only ever evicts one-hit keys. Links are unboxed in typed arrays:
 * a use moves two links, never allocates.
 */
export class SegmentedLru {
  readonly #protectedMax: number;
  /** Per slot: its neighbours in its segment (NONE at the ends) and its segment. */
  #newer = new Int32Array(0);
  #older = new Int32Array(0);
  #segment = new Uint8Array(0);
  /** Per segment (PROBATION, PROTECTED): most and least recently used slot, and slot count. */
  readonly #heads = [NONE, NONE];
  readonly #tails = [NONE, NONE];
  readonly #sizes = [0, 0];

  constructor(protectedMax: number) {
    this.#protectedMax = protectedMax;
  }

  /** Slots held in the protected segment. */
  get protectedSize(): number {
    return this.#sizes[PROTECTED]!;
  }

  /** Makes room for slots numbered below `capacity`. */
  grow(capacity: number): void {
    this.#newer = grown(this.#newer, new Int32Array(capacity));
    this.#older = grown(this.#older, new Int32Array(capacity));
    this.#segment = grown(this.#segment, new Uint8Array(capacity));
  }

  /** Adds a slot as probation's most recently used. */
  insert(slot: number): void {
    this.#push(slot, PROBATION);
  }

  /** A use of a held slot: to the front of protected, demoting protected's oldest slot if it overflows. */
  use(slot: number): void {
    const segment = this.#segment[slot]!;
    if (segment === PROTECTED && slot === this.#heads[PROTECTED]) return;
    this.remove(slot);
    this.#push(slot, PROTECTED);
    if (segment === PROBATION && this.#sizes[PROTECTED]! > this.#protectedMax) {
      const demoted = this.#tails[PROTECTED]!;
      this.remove(demoted);
      this.#push(demoted, PROBATION);
    }
  }

  /** The slot to evict: probation's least recently used, else protected's (only when probation is empty). */
  victim(): number {
    const tail = this.#tails[PROBATION]!;
    return tail === NONE ? this.#tails[PROTECTED]! : tail;
  }

  /** Takes a slot out of its segment. */
  remove(slot: number): void {
    const segment = this.#segment[slot]!;
    const newer = this.#newer[slot]!;
    const older = this.#older[slot]!;
    if (newer === NONE) this.#heads[segment] = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#tails[segment] = newer;
    else this.#newer[older] = newer;
    this.#sizes[segment]!--;
  }

  /** Forgets every slot and the arrays. */
  clear(): void {
    this.#newer = new Int32Array(0);
    this.#older = new Int32Array(0);
    this.#segment = new Uint8Array(0);
    this.#heads.fill(NONE);
    this.#tails.fill(NONE);
    this.#sizes.fill(0);
  }

  #push(slot: number, segment: number): void {
    const head = this.#heads[segment]!;
    this.#segment[slot] = segment;
    this.#newer[slot] = NONE;
    this.#older[slot] = head;
    if (head === NONE) this.#tails[segment] = slot;
    else this.#newer[head] = slot;
    this.#heads[segment] = slot;
    this.#sizes[segment]!++;
  }
}

/** `next` (a bigger array) holding `old`'s contents. */
export function grown<T extends Int32Array | Uint8Array | Float64Array>(old: T, next: T): T {
  next.set(old);
  return next;
}

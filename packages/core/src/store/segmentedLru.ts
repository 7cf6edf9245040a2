import { addPages, PAGE_SIZE, pageBits } from './pages.js';

const { BITS, MASK } = pageBits();

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

/** Links of PAGE_SIZE slots: their neighbours in their segment (NONE at the ends) and their segment. */
interface LinkPage {
  readonly newer: Int32Array;
  readonly older: Int32Array;
  readonly segment: Uint8Array;
}

function linkPage(): LinkPage {
  return {
    newer: new Int32Array(PAGE_SIZE),
    older: new Int32Array(PAGE_SIZE),
    segment: new Uint8Array(PAGE_SIZE),
  };
}

/**
 * Recency order of slot numbers in two segments (a segmented LRU): a slot starts in probation; a second use
 * moves it to protected, whose overflow moves back to probation. The victim is probation's least recently
 * used slot, so a flood of one-hit keys only ever evicts one-hit keys. Links are unboxed in typed arrays:
 * a use moves a few links, never allocates.
 */
export class SegmentedLru {
  readonly #protectedMax: number;
  #pages: LinkPage[] = [];
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

  /** Makes room for slots numbered below `count`. */
  grow(count: number): void {
    addPages(this.#pages, count, linkPage);
  }

  /** Adds a slot as probation's most recently used. */
  insert(slot: number): void {
    this.#push(slot, PROBATION);
  }

  /** A use of a held slot: to the front of protected, demoting protected's oldest slot if it overflows. */
  use(slot: number): void {
    const segment = this.#page(slot).segment[slot & MASK]!;
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
    const page = this.#page(slot);
    const at = slot & MASK;
    const segment = page.segment[at]!;
    const newer = page.newer[at]!;
    const older = page.older[at]!;
    if (newer === NONE) this.#heads[segment] = older;
    else this.#page(newer).older[newer & MASK] = older;
    if (older === NONE) this.#tails[segment] = newer;
    else this.#page(older).newer[older & MASK] = newer;
    this.#sizes[segment]!--;
  }

  /** Forgets every slot. */
  clear(): void {
    this.#pages = [];
    this.#heads.fill(NONE);
    this.#tails.fill(NONE);
    this.#sizes.fill(0);
  }

  #push(slot: number, segment: number): void {
    const page = this.#page(slot);
    const at = slot & MASK;
    const head = this.#heads[segment]!;
    page.segment[at] = segment;
    page.newer[at] = NONE;
    page.older[at] = head;
    if (head === NONE) this.#tails[segment] = slot;
    else this.#page(head).newer[head & MASK] = slot;
    this.#heads[segment] = slot;
    this.#sizes[segment]!++;
  }

  #page(slot: number): LinkPage {
    return this.#pages[slot >>> BITS]!;
  }
}

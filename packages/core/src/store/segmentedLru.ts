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

/**
 * Links of PAGE_SIZE slots, each slot's three together (its newer and older neighbour in its segment, NONE at
 * the ends, and its segment): a use reads and writes one cache line per slot, not one per field.
 */
type LinkPage = Int32Array;

const NEWER = 0;
const OLDER = 1;
const SEGMENT = 2;
/** Int32 fields per slot: the three above and one unused, so a slot never straddles a cache line. */
const FIELDS = 4;

function linkPage(): LinkPage {
  return new Int32Array(PAGE_SIZE * FIELDS);
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
    const segment = this.#page(slot)[(slot & MASK) * FIELDS + SEGMENT]!;
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
    const at = (slot & MASK) * FIELDS;
    const segment = page[at + SEGMENT]!;
    const newer = page[at + NEWER]!;
    const older = page[at + OLDER]!;
    if (newer === NONE) this.#heads[segment] = older;
    else this.#page(newer)[(newer & MASK) * FIELDS + OLDER] = older;
    if (older === NONE) this.#tails[segment] = newer;
    else this.#page(older)[(older & MASK) * FIELDS + NEWER] = newer;
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
    const at = (slot & MASK) * FIELDS;
    const head = this.#heads[segment]!;
    page[at + SEGMENT] = segment;
    page[at + NEWER] = NONE;
    page[at + OLDER] = head;
    if (head === NONE) this.#tails[segment] = slot;
    else this.#page(head)[(head & MASK) * FIELDS + NEWER] = slot;
    this.#heads[segment] = slot;
    this.#sizes[segment]!++;
  }

  #page(slot: number): LinkPage {
    return this.#pages[slot >>> BITS]!;
  }
}

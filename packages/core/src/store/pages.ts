/**
 * Slot data lives in pages of a fixed size, made as slots are first used: growing never copies an array.
 * One big array that doubles (typed) or grows by half (JS) copied millions of entries in one check: 40-120 ms
 * of one check's CPU time at a million keys.
 */
export const PAGE_BITS = 10;
/** Slots per page. */
export const PAGE_SIZE = 1 << PAGE_BITS;
/** A slot's index inside its page. */
export const PAGE_MASK = PAGE_SIZE - 1;

/** Adds pages made by `make` until slots below `count` have one. */
export function addPages<P>(pages: P[], count: number, make: () => P): void {
  while (pages.length * PAGE_SIZE < count) pages.push(make());
}

/**
 * PAGE_BITS and PAGE_MASK as plain values, for a module to keep in its own constants: under a loader that
 * turns imports into getters (tsx), reading an imported constant per slot was a quarter of a check's time.
 */
export function pageBits(): { readonly BITS: number; readonly MASK: number } {
  return { BITS: PAGE_BITS, MASK: PAGE_MASK };
}

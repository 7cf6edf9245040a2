/**
 * Reading numbers back from a counter's state. A state may come from a clock that has since stepped back
 * (an NTP correction, a restored VM, another gateway's clock) or from whatever else wrote the key, so the
 * algorithms read counts through this: their answers stay whole, non-negative and bounded.
 */

/** A stored count of units as a whole number >= 0; anything that is not a finite number counts as 0. */
export function storedCount(x: number): number {
  return x > 0 && x < Number.POSITIVE_INFINITY ? Math.ceil(x) : 0;
}

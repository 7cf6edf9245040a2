/** Medians and ranges over rounds. */

/** Median, minimum and maximum of some figures. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The spread of a non-empty list (NaN everywhere for an empty one). */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** `0.93 (0.90–0.95)`. */
export function showSpread(s: Spread, digits = 2): string {
  if (Number.isNaN(s.median)) return '–';
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

/** A list rotated left by `by`: round r starts with the r-th contender, so none always runs first. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/**
 * The over-admission bound docs/guide/regions.md states, per window of a `scope: global` rule, with no
 * partition: what the regions together may admit above the global limit.
 */
export interface BoundInputs {
  readonly limit: number;
  readonly regions: number;
  /** The regions option's firstSlice (default 0.01). */
  readonly firstSlice?: number;
}

/** Each region's optimistic first slice before its first sync of a window: regions × ceil(limit × firstSlice). */
export function overAdmissionBound({ limit, regions, firstSlice = 0.01 }: BoundInputs): number {
  return regions * Math.max(1, Math.ceil(limit * firstSlice));
}

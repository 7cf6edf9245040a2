/**
 * The bounds docs/guide/regions.md states ("The bound"), per window of a `scope: global` rule of limit L:
 * what the regions together may admit above L.
 */
export interface BoundInputs {
  readonly limit: number;
  readonly regions: number;
  /** The regions option's firstSlice (default 0.01). */
  readonly firstSlice?: number;
  /** The regions option's maxSlice (default 0.25). */
  readonly maxSlice?: number;
}

/** While linked: each region's optimistic first slice, regions × S₀ with S₀ = firstSlice × L (at least 1). */
export function overAdmissionBound({ limit, regions, firstSlice = 0.01 }: BoundInputs): number {
  return regions * Math.max(1, Math.ceil(limit * firstSlice));
}

/** In the window of a restart of the global store (its data lost): one slice per region, a slice ≤ maxSlice × L. */
export function restartBound({ limit, regions, maxSlice = 0.25 }: BoundInputs): number {
  return regions * Math.max(1, Math.ceil(limit * maxSlice));
}

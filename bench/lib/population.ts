/**
 * The source's key population for bench/capacity-scale.ts: `keys` API keys, of which `active` are in use at a
 * time, the active set sliding through the population by `active` keys every `rotateMs` (the source's "200,000
 * active in any minute" with a 60 s rotation), each request's key drawn Zipf-skewed over the active set.
 */

/** Cumulative Zipf weights over `n` ranks with exponent `s`, normalised to end at 1. */
export function zipfTable(n: number, s: number): Float64Array {
  const table = new Float64Array(n);
  let sum = 0;
  for (let rank = 0; rank < n; rank++) {
    sum += 1 / (rank + 1) ** s;
    table[rank] = sum;
  }
  for (let rank = 0; rank < n; rank++) table[rank] = table[rank]! / sum;
  return table;
}

/** The rank (0 = most frequent) whose cumulative weight first reaches `u` in [0, 1): a binary search. */
export function rankOf(table: Float64Array, u: number): number {
  let low = 0;
  let high = table.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (table[middle]! < u) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A prime multiplier that scatters ranks over the window (coprime with any active count not a multiple of it). */
const SCATTER = 7_919;

function inverseMod(a: number, n: number): number {
  // Extended Euclid on safe integers: n stays far below 2^53.
  let [oldR, r] = [a % n, n];
  let [oldS, s] = [1, 0];
  while (r !== 0) {
    const q = Math.floor(oldR / r);
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1) throw new Error(`${a} has no inverse modulo ${n}`);
  return ((oldS % n) + n) % n;
}

/** Options of {@link Population}. */
export interface PopulationOptions {
  readonly keys: number;
  readonly active: number;
  readonly zipf: number;
  readonly rotateMs: number;
}

/**
 * Which key a request uses at a moment. The active set is the window of key ids [start, start + active), start
 * sliding by one key every rotateMs / active. Within the window a key keeps its rank while it stays (rank =
 * id * SCATTER mod active), so the hot keys stay hot until the window passes them, and the rank-to-key map
 * scatters ranks over the window (the hottest keys are not neighbours).
 */
export class Population {
  private readonly table: Float64Array;
  private readonly unscatter: number;

  constructor(readonly options: PopulationOptions) {
    if (options.active > options.keys) throw new Error('--active must be at most --keys');
    this.table = zipfTable(options.active, options.zipf);
    this.unscatter = inverseMod(SCATTER, options.active);
  }

  /** The first key id of the active set `elapsedMs` after the run's start. */
  startAt(elapsedMs: number): number {
    return Math.floor((elapsedMs * this.options.active) / this.options.rotateMs);
  }

  /** The key id (0 .. keys-1) of rank `rank` in the window that starts at `start`. */
  keyOf(rank: number, start: number): number {
    const { active, keys } = this.options;
    // The id k in [start, start + active) with k * SCATTER ≡ rank (mod active).
    const residue = (rank * this.unscatter) % active;
    const id = start + ((((residue - start) % active) + active) % active);
    return id % keys;
  }

  /** A request's key id `elapsedMs` into the run, for a uniform random `u` in [0, 1). */
  draw(elapsedMs: number, u: number): number {
    return this.keyOf(rankOf(this.table, u), this.startAt(elapsedMs));
  }

  /** The share of requests the hottest key gets. */
  hottestShare(): number {
    return this.table[0]!;
  }
}

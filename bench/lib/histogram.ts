/**
 * Latencies in buckets 5% wide (from 1 µs to about 10 minutes in 420 counts), so that gateway processes can
 * send theirs over IPC and the bench can merge them before it reads a percentile.
 */
const GROWTH = 1.05;
const BUCKETS = 420;
const LOG_GROWTH = Math.log(GROWTH);

/** An empty histogram. */
export function histogram(): number[] {
  return new Array<number>(BUCKETS).fill(0);
}

/** Counts one latency, µs. */
export function record(counts: number[], us: number): void {
  const bucket = us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(us) / LOG_GROWTH));
  counts[bucket] = (counts[bucket] ?? 0) + 1;
}

/** Every histogram's counts added up. */
export function merge(all: readonly (readonly number[])[]): number[] {
  const sum = histogram();
  for (const counts of all) {
    for (let i = 0; i < counts.length; i++) sum[i] = (sum[i] ?? 0) + counts[i]!;
  }
  return sum;
}

/** The latency below which a share `q` of the counts lies: its bucket's upper bound, µs (NaN when empty). */
export function quantile(counts: readonly number[], q: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return Number.NaN;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= q * total) return GROWTH ** i;
  }
  return GROWTH ** (counts.length - 1);
}

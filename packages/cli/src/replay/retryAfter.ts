/** Upper bounds (ms) of the Retry-After buckets a replay reports; beyond the last, `>1h`; Infinity, `never`. */
const BOUNDS = [1000, 5000, 10_000, 30_000, 60_000, 300_000, 3_600_000] as const;

/** The bucket labels, in order. */
export const RETRY_AFTER_LABELS: readonly string[] = [
  '<=1s',
  '<=5s',
  '<=10s',
  '<=30s',
  '<=1m',
  '<=5m',
  '<=1h',
  '>1h',
  'never',
];

/** The bucket of a denial's retryAfterMs; `never` for a request that can never fit (cost above capacity). */
export function retryAfterBucket(ms: number): number {
  if (!Number.isFinite(ms)) return BOUNDS.length + 1;
  for (let i = 0; i < BOUNDS.length; i++) if (ms <= (BOUNDS[i] ?? 0)) return i;
  return BOUNDS.length;
}

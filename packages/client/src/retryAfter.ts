const DELTA_SECONDS = /^\d+$/;

/**
 * The wait a `Retry-After` value asks for, ms from `now`: delta-seconds or an HTTP date (RFC 9110 10.2.3).
 * A date in the past is 0; a missing or unreadable value is undefined.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (DELTA_SECONDS.test(text)) return Number(text) * 1000;
  // Date.parse reads IMF-fixdate and the obsolete RFC 850 and asctime forms alike; a bare number is not a date.
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

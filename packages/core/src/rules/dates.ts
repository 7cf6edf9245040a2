const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch ms at the start (00:00 UTC) of a `YYYY-MM-DD` day, or undefined when it is not a real calendar day. */
export function dayStartMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const found = DAY.exec(text);
  if (!found) return undefined;
  const [year, month, day] = [Number(found[1]), Number(found[2]), Number(found[3])];
  const ms = Date.UTC(year, month - 1, day);
  // Date.UTC rolls 2027-02-30 over to March; a real day survives the round trip.
  const date = new Date(ms);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
    ? ms
    : undefined;
}

/**
 * Epoch ms at which a rule with this `expires` stops applying: the end of the UTC day for a date, the instant itself
 * for an ISO datetime (which must say its offset, so that no server's local time zone changes the answer).
 */
export function expiryMs(text: unknown): number | undefined {
  const dayStart = dayStartMs(text);
  if (dayStart !== undefined) return dayStart + 86_400_000;
  if (typeof text !== 'string') return undefined;
  const found = DATETIME.exec(text);
  if (!found || dayStartMs(found[1]) === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Today's date (UTC) as `YYYY-MM-DD`. */
export function utcToday(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

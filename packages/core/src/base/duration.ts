/** Calendar periods (UTC) a quota can reset on. */
export type CalendarPeriod = 'day' | 'week' | 'month';

import { ConfigError } from './errors.js';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** Calendar periods a quota can reset on (UTC). */
export const CALENDAR_PERIODS: readonly CalendarPeriod[] = ['day', 'week', 'month'];

/** Milliseconds in a duration such as `500ms` or `60s`, or undefined when the text is not one. */
export function durationMs(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const found = DURATION.exec(text);
  if (!found) return undefined;
  const ms = Number(found[1]) * UNIT_MS[found[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * Parses a duration written as a whole number and a unit (`500ms`, `1s`, `60s`, `1m`, `1h`, `1d`) into milliseconds.
 * Throws a ConfigError for anything else, including fractions (`1.5s`) and a missing unit (`60`).
 */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new ConfigError(`${JSON.stringify(text)} is not a duration${unitHint(text)}`);
  return ms;
}

/**
 * ` (did you mean "60s"?)` for a bare whole number (`per: 60`, `"60"`), which is most likely seconds; '' for
 * anything else.
 */
export function unitHint(value: unknown): string {
  const digits = typeof value === 'number' ? String(value) : value;
  if (typeof digits !== 'string' || !/^\d{1,15}$/.test(digits)) return '';
  return ` (did you mean "${digits}s"?)`;
}

/** True for `day`, `week` and `month`. */
export function isCalendarPeriod(text: unknown): text is CalendarPeriod {
  return typeof text === 'string' && (CALENDAR_PERIODS as readonly string[]).includes(text);
}

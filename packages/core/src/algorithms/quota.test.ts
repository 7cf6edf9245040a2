import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calendarPeriod, civilFromDays, daysFromCivil, quota } from './quota.js';

const DAY = 86_400_000;

describe('calendar arithmetic', () => {
  it('agrees with Date.UTC for every day from 1900 to 2400', () => {
    fc.assert(
      fc.property(fc.integer({ min: -25_567, max: 157_000 }), (day) => {
        const date = new Date(day * DAY);
        const expected = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
        expect(civilFromDays(day)).toEqual(expected);
        expect(daysFromCivil(expected.year, expected.month, date.getUTCDate())).toBe(day);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds day, ISO week and month bounds', () => {
    const now = Date.UTC(2026, 11, 6, 23, 59); // Sunday
    expect(calendarPeriod('day', now)).toEqual({ start: Date.UTC(2026, 11, 6), end: Date.UTC(2026, 11, 7) });
    expect(calendarPeriod('week', now)).toEqual({
      start: Date.UTC(2026, 10, 30),
      end: Date.UTC(2026, 11, 7),
    });
    expect(calendarPeriod('month', Date.UTC(2028, 1, 29, 12))).toEqual({
      start: Date.UTC(2028, 1, 1),
      end: Date.UTC(2028, 2, 1),
    });
    expect(calendarPeriod('month', Date.UTC(2026, 11, 31, 23))).toEqual({
      start: Date.UTC(2026, 11, 1),
      end: Date.UTC(2027, 0, 1),
    });
  });
});

describe('quota', () => {
  it('spends a monthly budget and resets on the first of the next month (leap February)', () => {
    const params = { limit: 3, windowMs: 0, burst: 3, period: 'month' as const };
    const feb29 = Date.UTC(2028, 1, 29, 22, 0);
    const first = quota.decide(undefined, feb29, params, 3);
    expect(first).toMatchObject({ allowed: true, remaining: 0, resetMs: 2 * 3_600_000 });
    expect(quota.decide(first.state, feb29, params, 1)).toMatchObject({
      allowed: false,
      retryAfterMs: 7_200_000,
    });
    expect(quota.decide(first.state, Date.UTC(2028, 2, 1) - 1, params, 1).allowed).toBe(false);
    expect(quota.decide(first.state, Date.UTC(2028, 2, 1), params, 1)).toMatchObject({
      allowed: true,
      remaining: 2,
    });
  });

  it('falls back to a fixed window without a period', () => {
    const params = { limit: 2, windowMs: 60_000, burst: 2 };
    const start = Date.UTC(2026, 10, 30, 12, 0);
    const outcome = quota.decide(undefined, start + 30_000, params, 2);
    expect(quota.decide(outcome.state, start + 30_000, params, 1).retryAfterMs).toBe(30_000);
  });
});

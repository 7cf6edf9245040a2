import type { AlgorithmDescriptor } from './descriptor.js';
import type { CalendarPeriod, LimitParams } from './limits.js';
import {
  countInPeriod,
  isNextPeriod,
  isPeriodCountState,
  type PeriodCountState,
  refundInPeriod,
} from './periodCount.js';

/** quota state: units used in the period that starts at `start` (epoch ms, UTC). */
export type QuotaState = PeriodCountState;

const DAY_MS = 86_400_000;

/**
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), in integer
 * arithmetic only, so that the Lua port gives the same numbers. `month` is 1-12.
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The year and month (1-12) of a day number (H. Hinnant's civil_from_days, without the day). */
export function civilFromDays(days: number): { year: number; month: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month };
}

/** The UTC calendar period [start, end) in epoch ms holding `now`. Weeks start on Monday (ISO). */
export function calendarPeriod(period: CalendarPeriod, now: number): { start: number; end: number } {
  const day = Math.floor(now / DAY_MS);
  if (period === 'day') return { start: day * DAY_MS, end: (day + 1) * DAY_MS };
  if (period === 'week') {
    // 1970-01-01 was a Thursday: (day + 3) mod 7 counts days since Monday.
    const monday = day - ((((day + 3) % 7) + 7) % 7);
    return { start: monday * DAY_MS, end: (monday + 7) * DAY_MS };
  }
  const { year, month } = civilFromDays(day);
  const first = daysFromCivil(year, month, 1);
  const next = month === 12 ? daysFromCivil(year + 1, 1, 1) : daysFromCivil(year, month + 1, 1);
  return { start: first * DAY_MS, end: next * DAY_MS };
}

function periodOf(params: LimitParams, now: number): { start: number; end: number } {
  if (params.period !== undefined) return calendarPeriod(params.period, now);
  const start = Math.floor(now / params.windowMs) * params.windowMs;
  return { start, end: start + params.windowMs };
}

/**
 * quota: a budget of `limit` units per UTC calendar day, ISO week (from Monday 00:00) or month when
 * `period` is set, else per epoch-aligned window of windowMs. It resets at the period's end. After a clock
 * step back into the previous period, the next period's count still holds, as in fixed_window.
 */
export const quota: AlgorithmDescriptor<'quota', QuotaState> = {
  name: 'quota',
  limit: 'requests',
  burst: false,
  calendar: true,
  leasable: true,
  release: 'refund',
  // Only into the period the charge was counted in.
  refund(state, now, params, charge) {
    if (charge.at === undefined) return undefined;
    const period = periodOf(params, Math.floor(charge.at));
    return refundInPeriod(state, now, period.start, period.end, charge.cost);
  },
  isState: isPeriodCountState,
  decide(state, now, params, cost) {
    const t = Math.floor(now);
    const current = periodOf(params, t);
    if (!isNextPeriod(state, current.start, current.end)) {
      return countInPeriod(state, t, current.start, current.end, params.limit, cost, 0);
    }
    const ahead = periodOf(params, state.start);
    return countInPeriod(state, state.start, ahead.start, ahead.end, params.limit, cost, state.start - t);
  },
};

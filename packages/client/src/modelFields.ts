import type { HeaderSource } from './headerSource.js';

/** What a model API's `x-ratelimit-*-<kind>` fields say about one budget. */
export interface ModelBudget {
  readonly limit: number;
  readonly remaining: number;
  /** Until the budget is whole again, ms from the response. */
  readonly resetMs: number;
}

/** The kinds of budget model APIs publish. */
export type ModelBudgetKind = 'requests' | 'tokens';

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const DURATION = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s))+$/;
const PART = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;

/**
 * A wait as model APIs write it (`120ms`, `36s`, `6m0s`, `1h2m3s`, `1.5s`), or a bare number of seconds;
 * undefined when unreadable.
 */
export function parseDuration(text: string | null): number | undefined {
  const trimmed = text?.split(',')[0]?.trim();
  if (trimmed === undefined || trimmed === '') return undefined;
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!DURATION.test(trimmed)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART))
    ms += Number(amount) * (UNIT_MS[unit as string] ?? 0);
  return ms;
}

/**
 * The `x-ratelimit-limit-<kind>`, `x-ratelimit-remaining-<kind>` and `x-ratelimit-reset-<kind>` fields, or
 * undefined when one is missing or unreadable.
 */
export function readModelBudget(headers: HeaderSource, kind: ModelBudgetKind): ModelBudget | undefined {
  const limit = Number(headers.get(`x-ratelimit-limit-${kind}`)?.split(',')[0] ?? Number.NaN);
  const remaining = Number(headers.get(`x-ratelimit-remaining-${kind}`)?.split(',')[0] ?? Number.NaN);
  const resetMs = parseDuration(headers.get(`x-ratelimit-reset-${kind}`));
  if (!(limit >= 0 && remaining >= 0) || resetMs === undefined) return undefined;
  return { limit, remaining: Math.min(remaining, limit), resetMs };
}

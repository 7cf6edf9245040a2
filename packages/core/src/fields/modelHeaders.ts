import type { Decision, RuleResult } from '../observe/contract.js';
import type { HeaderValues } from './values.js';

/*
 * The rate-limit fields model APIs send (`x-ratelimit-limit-requests`, `x-ratelimit-remaining-tokens`,
 * `x-ratelimit-reset-tokens`, ...): one set per kind of budget. A rule with `settle` is a token budget, any
 * other a request budget; each set shows the tightest enforced rule of its kind (the denying one first).
 */

/** The largest number a header shows (as responses.ts's MAX_HEADER_NUMBER). */
const MAX = 999_999_999_999_999;

const KINDS = ['requests', 'tokens'] as const;

/** A count as a header shows it: whole, never negative, never huge. */
const count = (value: number): string => String(value > 0 ? Math.min(Math.floor(value), MAX) : 0);

/** A wait as model APIs write it: `120ms` below a second, else whole seconds up as `1h2m3s`, `6m0s`, `36s`. */
export function durationText(ms: number): string {
  if (!(ms > 0)) return '0s';
  if (!Number.isFinite(ms)) return `${MAX}s`;
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  return m > 0 ? `${m}m${s}s` : `${s}s`;
}

/** The rule a kind's fields show: an enforced, counted result of that kind, denied first, else least left. */
function tightest(results: readonly RuleResult[], tokens: boolean): RuleResult | undefined {
  let shown: RuleResult | undefined;
  for (const result of results) {
    if (result.mode !== 'enforce' || result.failed || result.action !== undefined) continue;
    if ((result.settles === true) !== tokens) continue;
    if (shown === undefined || rank(result) < rank(shown)) shown = result;
  }
  return shown;
}

/** Lower is tighter: a denial, then the smallest share left. */
function rank(result: RuleResult): number {
  if (!result.allowed) return -1;
  return result.limit > 0 ? result.remaining / result.limit : 0;
}

/**
 * The model-API fields of a decision. Reset: when the shown rule is whole again; for a denied rule, when the
 * request fits (its retry, as Retry-After).
 */
export function modelHeaders(decision: Decision): HeaderValues {
  const headers: HeaderValues = {};
  for (const kind of KINDS) {
    const shown = tightest(decision.results, kind === 'tokens');
    if (shown === undefined) continue;
    headers[`x-ratelimit-limit-${kind}`] = count(shown.limit);
    headers[`x-ratelimit-remaining-${kind}`] = count(shown.remaining);
    headers[`x-ratelimit-reset-${kind}`] = durationText(shown.allowed ? shown.resetMs : shown.retryAfterMs);
  }
  return headers;
}

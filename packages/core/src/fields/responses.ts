import type { Decision, RuleResult } from '../observe/contract.js';
import { jitteredSeconds } from './jitter.js';
import { modelHeaders } from './modelHeaders.js';
import { shownResult } from './shown.js';
import type { HeaderValues } from './values.js';

/**
 * Which IETF draft of the RateLimit header fields responses carry, named as express-rate-limit's
 * `standardHeaders`: `draft-6` separate `RateLimit-Limit/-Remaining/-Reset`, `draft-7` one combined
 * `RateLimit: limit=, remaining=, reset=`, `draft-8` (and later drafts) `RateLimit: "rule";r=;t=`. Each comes
 * with its `RateLimit-Policy`.
 */
export type StandardHeaders = 'draft-6' | 'draft-7' | 'draft-8';

/**
 * Which rate-limit header set responses carry: a standard form, `legacy` (`X-RateLimit-*`), a standard form
 * and legacy (`draft-7+legacy`), or none. `draft` is `draft-8`, `both` is `draft-8+legacy`. `model` is the
 * fields model APIs send (`x-ratelimit-remaining-tokens`, ...: modelHeaders.ts), `draft+model` both.
 */
export type HeaderFormat =
  | 'draft'
  | 'legacy'
  | 'both'
  | 'none'
  | 'model'
  | 'draft+model'
  | StandardHeaders
  | `${StandardHeaders}+legacy`;

/** Every HeaderFormat, for option checks. */
export const HEADER_FORMATS = [
  'draft',
  'legacy',
  'both',
  'none',
  'draft-6',
  'draft-7',
  'draft-8',
  'draft-6+legacy',
  'draft-7+legacy',
  'draft-8+legacy',
  'model',
  'draft+model',
] as const satisfies readonly HeaderFormat[];

/** The parts of a format: which standard form (if any) and whether the legacy fields come too. */
interface HeaderForms {
  readonly standard: StandardHeaders | undefined;
  readonly legacy: boolean;
}

const FORMS: Readonly<Record<HeaderFormat, HeaderForms>> = {
  draft: { standard: 'draft-8', legacy: false },
  both: { standard: 'draft-8', legacy: true },
  legacy: { standard: undefined, legacy: true },
  none: { standard: undefined, legacy: false },
  'draft-6': { standard: 'draft-6', legacy: false },
  'draft-7': { standard: 'draft-7', legacy: false },
  'draft-8': { standard: 'draft-8', legacy: false },
  'draft-6+legacy': { standard: 'draft-6', legacy: true },
  'draft-7+legacy': { standard: 'draft-7', legacy: true },
  'draft-8+legacy': { standard: 'draft-8', legacy: true },
  model: { standard: undefined, legacy: false },
  'draft+model': { standard: 'draft-8', legacy: false },
};

/** Whether a format carries the model-API fields (modelHeaders.ts) beside its own. */
const withModel = (format: HeaderFormat): boolean => format === 'model' || format === 'draft+model';

/** Still importable from here, where adapters and the Envoy service have always found it. */
export type { HeaderValues } from './values.js';

/** The names of the rate-limit fields a response carries. */
export interface HeaderNames {
  readonly policy: string;
  readonly rateLimit: string;
  readonly limit: string;
  readonly remaining: string;
  readonly reset: string;
  readonly legacyLimit: string;
  readonly legacyRemaining: string;
  readonly legacyReset: string;
}

/** The names as the drafts and the legacy fields write them. */
export const DRAFT_NAMES: HeaderNames = Object.freeze({
  policy: 'RateLimit-Policy',
  rateLimit: 'RateLimit',
  limit: 'RateLimit-Limit',
  remaining: 'RateLimit-Remaining',
  reset: 'RateLimit-Reset',
  legacyLimit: 'X-RateLimit-Limit',
  legacyRemaining: 'X-RateLimit-Remaining',
  legacyReset: 'X-RateLimit-Reset',
});

/**
 * The same names in lower case, for a framework that sends every name so: given them, it need not
 * lower-case each name of each response.
 */
export const LOWER_CASE_NAMES: HeaderNames = Object.freeze(
  Object.fromEntries(Object.entries(DRAFT_NAMES).map(([field, name]) => [field, name.toLowerCase()])),
) as HeaderNames;

/** The JSON body of a denied request. */
export interface DeniedBody {
  readonly error: 'rate_limited' | 'rate_limit_unavailable' | 'forbidden';
  readonly rule: string | null;
  /** Whole seconds to wait; null when the request can never be allowed (cost above capacity). */
  readonly retryAfter: number | null;
  /** Set when the key is banned (`ban` in the rule): `ban`, and when the ban ends (ISO 8601, UTC). */
  readonly reason?: 'ban';
  readonly bannedUntil?: string;
  /** The escalation stage, for a rule with `warn_at` or `challenge` (escalation/stages.ts). */
  readonly stage?: 'limit' | 'challenge' | 'ban';
  /** At the challenge stage: the proof-of-work challenge to solve (escalation/challengeResponse.ts). */
  readonly challenge?: {
    readonly algorithm: string;
    readonly difficulty: number;
    readonly token: string;
    /** ISO 8601, UTC. */
    readonly expiresAt: string;
  };
  /** A 403 for a solution refused: why (`replayed`, `expired`, `forged`, `wrong_key`...). */
  readonly refused?: string;
}

/** Everything a denied response is made of; `onDenied` receives it to build its own. */
export interface DeniedResponse {
  /** 429; 503 when a rule failed closed because the store was unavailable; 403 for a `deny` rule. */
  readonly status: 429 | 503 | 403;
  readonly headers: HeaderValues;
  readonly body: DeniedBody;
  readonly decision: Decision;
  /** At the challenge stage, for a browser (Accept: text/html): a page that solves the challenge, sent instead of the body. */
  readonly html?: string;
}

/**
 * The largest number a header shows: a structured-field integer has at most 15 digits (RFC 8941), and below
 * 2^53 every number is exact. A corrupt or huge stored state must not print `1e+21` or an inexact count.
 */
export const MAX_HEADER_NUMBER = 999_999_999_999_999;

/** Whole seconds, rounded up, at most MAX_HEADER_NUMBER; 0 for anything not a positive finite number. */
const toSeconds = (ms: number): number =>
  ms > 0 && ms < Number.POSITIVE_INFINITY ? Math.min(Math.ceil(ms / 1000), MAX_HEADER_NUMBER) : 0;

/**
 * Retry-After seconds: rounded up and at least 1; undefined when no wait helps. With a `jitter` share (the
 * denying rule's `retry_jitter`) the wait is lengthened by a random 0 to that share of itself, never shortened.
 */
export function retryAfterSeconds(
  decision: Decision,
  jitter = 0,
  random: () => number = Math.random,
): number | undefined {
  const exact = decision.retryAfterMs;
  if (!Number.isFinite(exact)) return undefined;
  const seconds = jitter > 0 ? jitteredSeconds(exact, jitter, random()) : toSeconds(exact);
  return Math.min(Math.max(1, seconds), MAX_HEADER_NUMBER);
}

/**
 * The RateLimit fields of a decision: the denying rule's, or when allowed the most constrained rule's
 * (`shown`, else chosen among the decision's results by {@link shownResult}), as IETF
 * draft-ietf-httpapi-ratelimit-headers structured fields (draft 6, 7 or 8+), legacy X-RateLimit-* fields,
 * one standard form and legacy, or none.
 * Empty when no rule applied. Seconds are whole, rounded up; counts are whole and never negative. The legacy
 * `X-RateLimit-Reset` is a Unix time in seconds (read from `clock`), as express-rate-limit and GitHub send it.
 */
export function rateLimitHeaders(
  decision: Decision,
  format: HeaderFormat,
  shown?: RuleResult,
  clock: () => number = Date.now,
  names: HeaderNames = DRAFT_NAMES,
): HeaderValues {
  if (format === 'none') return {};
  if (!decision.allowed) return deniedHeaders(decision, format, retryAfterSeconds(decision), clock);
  const result = shown ?? shownResult(decision.results);
  if (result === undefined) return {};
  const headers = limitHeaders(result, allowedReset(result), format, clock, names);
  return withModel(format) ? Object.assign(headers, modelHeaders(decision)) : headers;
}

/**
 * `t` of an allowed response: seconds until the shown quota is whole again, at most the window `w`. A sliding
 * window weighs its count for up to two windows, but clients read `t` as the reset of the window `w`
 * announced in RateLimit-Policy: capped, `r` is what may be spent over the next `t` seconds, and `t` never
 * rises above `w` between one allowed response and the next.
 */
function allowedReset(result: RuleResult): number {
  const reset = toSeconds(result.resetMs);
  return result.windowMs > 0 ? Math.min(reset, toSeconds(result.windowMs)) : reset;
}

/** The denying rule's RateLimit fields, their reset the Retry-After sent (else the rule's reset). */
function deniedHeaders(
  decision: Decision,
  format: HeaderFormat,
  retryAfter: number | undefined,
  clock: () => number,
): HeaderValues {
  const rule = decision.rule;
  if (format === 'none' || rule === undefined) return {};
  const reset = retryAfter ?? toSeconds(decision.resetMs);
  const windowMs = windowOf(decision, rule);
  const headers = limitHeaders(
    { rule, limit: decision.limit, remaining: decision.remaining, windowMs },
    reset,
    format,
    clock,
  );
  return withModel(format) ? Object.assign(headers, modelHeaders(decision)) : headers;
}

/** A count as a header shows it: a whole number, never negative, never past MAX_HEADER_NUMBER (NaN: 0). */
const count = (value: number): number => (value > 0 ? Math.min(Math.floor(value), MAX_HEADER_NUMBER) : 0);

/** The numbers of one rule that headers show. */
type Shown = Pick<RuleResult, 'rule' | 'limit' | 'remaining' | 'windowMs'>;

/** The fields of one rule in `format` (never `none`). */
function limitHeaders(
  shown: Shown,
  reset: number,
  format: HeaderFormat,
  clock: () => number,
  names: HeaderNames = DRAFT_NAMES,
): HeaderValues {
  const headers: HeaderValues = {};
  const forms = FORMS[format] ?? FORMS.draft;
  const text = ruleText(shown.rule, count(shown.limit), shown.windowMs);
  const remaining = count(shown.remaining);
  if (forms.standard === 'draft-8') {
    headers[names.policy] = text.policy;
    headers[names.rateLimit] = text.remainingPrefix + remaining + RESET + reset;
  } else if (forms.standard === 'draft-7') {
    headers[names.policy] = text.numericPolicy;
    headers[names.rateLimit] = `limit=${text.limitText}, remaining=${remaining}, reset=${reset}`;
  } else if (forms.standard === 'draft-6') {
    headers[names.policy] = text.numericPolicy;
    headers[names.limit] = text.limitText;
    headers[names.remaining] = String(remaining);
    headers[names.reset] = String(reset);
  }
  if (forms.legacy) {
    headers[names.legacyLimit] = text.limitText;
    headers[names.legacyRemaining] = String(remaining);
    headers[names.legacyReset] = String(Math.ceil(clock() / 1000) + reset);
  }
  return headers;
}

/** The window of the decision's rule, ms (0 when unknown). */
function windowOf(decision: Decision, rule: string): number {
  for (const result of decision.results) if (result.rule === rule) return result.windowMs;
  return 0;
}

/** Header text that only changes with a rule's name, limit or window. */
interface RuleText {
  readonly limit: number;
  readonly windowMs: number;
  /** `RateLimit-Policy` of draft 8: the name as a structured-field string, the quota and the window. */
  readonly policy: string;
  /** `RateLimit-Policy` of drafts 6 and 7: the quota and the window, unnamed (`100;w=60`). */
  readonly numericPolicy: string;
  /** The start of `RateLimit`, up to its remaining count: `"name";r=`. */
  readonly remainingPrefix: string;
  /** The limit as `X-RateLimit-Limit` shows it. */
  readonly limitText: string;
}

const RESET = ';t=';

/**
 * Rule header text by rule name, made once per decision shape (rule, limit, window) rather than on every
 * response: a response only adds its two numbers. Bounded, as names can change.
 */
const ruleTexts = new Map<string, RuleText>();
const MAX_RULE_TEXTS = 10_000;

function ruleText(rule: string, limit: number, windowMs: number): RuleText {
  const known = ruleTexts.get(rule);
  if (known !== undefined && known.limit === limit && known.windowMs === windowMs) return known;
  const quoted = sfString(rule);
  const window = windowMs > 0 ? `;w=${toSeconds(windowMs)}` : '';
  const text: RuleText = {
    limit,
    windowMs,
    policy: `${quoted};q=${limit}${window}`,
    numericPolicy: `${limit}${window}`,
    remainingPrefix: `${quoted};r=`,
    limitText: String(limit),
  };
  if (ruleTexts.size >= MAX_RULE_TEXTS) ruleTexts.clear();
  ruleTexts.set(rule, text);
  return text;
}

/**
 * The status, headers and body of a denied request: 429 when a counter denied (an in-process fallback
 * counting during an outage included), 503 when the denying rule failed closed with nothing counting, 403
 * when a `deny` rule refused it.
 * Both carry `Cache-Control: no-store`, so no cache replays a denial to other clients or past its time.
 * `jitter` (the denying rule's `retry_jitter` share) lengthens Retry-After and the fields' reset alike.
 */
export function deniedResponse(
  decision: Decision,
  format: HeaderFormat,
  clock: () => number = Date.now,
  jitter = 0,
): DeniedResponse {
  if (decision.action === 'deny') return forbidden(decision);
  const retryAfter = retryAfterSeconds(decision, jitter) ?? null;
  const unavailable = failedClosed(decision);
  const headers = deniedHeaders(decision, format, retryAfter ?? undefined, clock);
  if (retryAfter !== null) headers['Retry-After'] = String(retryAfter);
  if (decision.rule !== undefined) headers['X-RateLimit-Rule'] = decision.rule;
  headers['Cache-Control'] = 'no-store';
  return {
    status: unavailable ? 503 : 429,
    headers,
    body: {
      error: unavailable ? 'rate_limit_unavailable' : 'rate_limited',
      rule: decision.rule ?? null,
      retryAfter,
      ...(decision.bannedUntil === undefined
        ? {}
        : { reason: 'ban' as const, bannedUntil: new Date(decision.bannedUntil).toISOString() }),
    },
    decision,
  };
}

/** A `deny` rule refused the request: 403 with the rule, no wait and no limit numbers (none was counted). */
function forbidden(decision: Decision): DeniedResponse {
  const rule = decision.rule ?? null;
  const headers: HeaderValues = { 'Cache-Control': 'no-store' };
  if (rule !== null) headers['X-RateLimit-Rule'] = rule;
  return { status: 403, headers, body: { error: 'forbidden', rule, retryAfter: null }, decision };
}

/** The denying rule failed closed: the store is down and no counter stood in, the client is over no limit. */
function failedClosed(decision: Decision): boolean {
  for (const result of decision.results) {
    if (result.rule === decision.rule && result.failed) return result.fallback !== true;
  }
  return false;
}

/** A structured-field string (RFC 8941): quoted, with `\` and `"` escaped. */
function sfString(text: string): string {
  return `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

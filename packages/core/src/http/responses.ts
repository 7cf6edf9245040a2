import type { Decision } from '../types.js';

/** Which rate-limit header set responses carry. */
export type HeaderFormat = 'draft' | 'legacy' | 'both' | 'none';

/** Header names and values to set on a response. */
export type HeaderValues = Record<string, string>;

/** The JSON body of a denied request. */
export interface DeniedBody {
  readonly error: 'rate_limited' | 'rate_limit_unavailable';
  readonly rule: string | null;
  /** Whole seconds to wait; null when the request can never be allowed (cost above capacity). */
  readonly retryAfter: number | null;
}

/** Everything a denied response is made of; `onDenied` receives it to build its own. */
export interface DeniedResponse {
  /** 429, or 503 when a rule failed closed because the store was unavailable. */
  readonly status: 429 | 503;
  readonly headers: HeaderValues;
  readonly body: DeniedBody;
  readonly decision: Decision;
}

const toSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** Retry-After seconds: rounded up and at least 1; undefined when no wait helps. */
export function retryAfterSeconds(decision: Decision): number | undefined {
  return Number.isFinite(decision.retryAfterMs) ? Math.max(1, toSeconds(decision.retryAfterMs)) : undefined;
}

/**
 * The RateLimit fields of a decision's rule (the denying rule, or the most constrained one when allowed),
 * as IETF draft-ietf-httpapi-ratelimit-headers structured fields, legacy X-RateLimit-* fields, both or none.
 * Empty when no rule applied. Seconds are whole, rounded up.
 */
export function rateLimitHeaders(decision: Decision, format: HeaderFormat): HeaderValues {
  const rule = decision.rule;
  if (rule === undefined || format === 'none') return {};
  const retry = decision.allowed ? undefined : retryAfterSeconds(decision);
  const reset = retry ?? toSeconds(decision.resetMs);
  const headers: HeaderValues = {};
  if (format === 'draft' || format === 'both') {
    const windowMs = decision.results.find((result) => result.rule === rule)?.windowMs ?? 0;
    const window = windowMs > 0 ? `;w=${toSeconds(windowMs)}` : '';
    headers['RateLimit-Policy'] = `${sfString(rule)};q=${decision.limit}${window}`;
    headers.RateLimit = `${sfString(rule)};r=${decision.remaining};t=${reset}`;
  }
  if (format === 'legacy' || format === 'both') {
    headers['X-RateLimit-Limit'] = String(decision.limit);
    headers['X-RateLimit-Remaining'] = String(decision.remaining);
    headers['X-RateLimit-Reset'] = String(reset);
  }
  return headers;
}

/** The status, headers and body of a denied request. */
export function deniedResponse(decision: Decision, format: HeaderFormat): DeniedResponse {
  const retryAfter = retryAfterSeconds(decision) ?? null;
  // The denying rule failed closed: the store is down, the client is not over any limit.
  const unavailable = decision.results.some((result) => result.rule === decision.rule && result.failed);
  const headers = rateLimitHeaders(decision, format);
  if (retryAfter !== null) headers['Retry-After'] = String(retryAfter);
  if (decision.rule !== undefined) headers['X-RateLimit-Rule'] = decision.rule;
  return {
    status: unavailable ? 503 : 429,
    headers,
    body: {
      error: unavailable ? 'rate_limit_unavailable' : 'rate_limited',
      rule: decision.rule ?? null,
      retryAfter,
    },
    decision,
  };
}

/** A structured-field string (RFC 8941): quoted, with `\` and `"` escaped. */
function sfString(text: string): string {
  return `"${text.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

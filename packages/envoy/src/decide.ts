/**
 * One ShouldRateLimit call, from decoded request to response: the request's descriptors as Sluice descriptor
 * maps, decided by the limiter, answered with one DescriptorStatus each and the RateLimit headers.
 */
import type { Decision, Descriptors, Limiter, RuleResult } from '@sluice/core';
import { rateLimitHeaders, retryAfterSeconds, shownResult } from '@sluice/core/http';
import { ENVOY_DOMAIN, ENVOY_PATH } from './envoyConfig.js';
import {
  CODE,
  type DescriptorStatus,
  type RateLimitRequest,
  type RateLimitResponse,
  UNIT,
} from './messages.js';

/** One descriptor of a request as the limiter sees it, with the units it spends. */
export interface DescriptorSet {
  readonly descriptors: Descriptors;
  readonly cost: number;
}

/** What the service tells its log: stable codes, never a descriptor value. */
export type ServiceNotice =
  | 'SLUICE_ENVOY_UNKNOWN_DOMAIN'
  | 'SLUICE_ENVOY_EMPTY_DESCRIPTOR'
  | 'SLUICE_ENVOY_LIMIT_OVERRIDE_IGNORED'
  | 'SLUICE_ENVOY_INVALID_REQUEST'
  | 'SLUICE_ENVOY_FAILED_OPEN';

/** Largest limit_remaining (uint32): Envoy's answer for an unlimited descriptor. */
const MAX_UINT32 = 4_294_967_295;

/**
 * Decides every descriptor set of one request as one: one rule table, one store call, all or nothing (as an
 * HTTP request's rules), with the rules another matched rule `replaces` left out before counting.
 */
export function decideDescriptors(
  limiter: Limiter,
  sets: readonly DescriptorSet[],
  replaces: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<Decision[]> {
  return limiter.checkMany(sets, { replaces });
}

/**
 * An Envoy descriptor's entries as a descriptor map; `envoy_path` names the keys in order, `envoy_domain` the
 * request's domain (both reserved: an entry of that name is overwritten).
 */
export function descriptorMap(
  entries: RateLimitRequest['descriptors'][number]['entries'],
  domain: string,
): Descriptors {
  const map: Record<string, string> = {};
  for (const entry of entries) map[entry.key] = entry.value;
  map[ENVOY_PATH] = entries.map((entry) => entry.key).join('/');
  map[ENVOY_DOMAIN] = domain;
  return map;
}

/** True for a descriptor the rules cannot read: no entries, or an entry with an empty key or value. */
export function isEmptyDescriptor(entries: RateLimitRequest['descriptors'][number]['entries']): boolean {
  return entries.length === 0 || entries.some((entry) => entry.key === '' || entry.value === '');
}

/** The units a descriptor spends: its own hits_addend, else the request's, else 1 (Envoy's unset is 0). */
export function costOf(request: RateLimitRequest, index: number): number {
  const own = request.descriptors[index]?.hitsAddend;
  if (own !== undefined) return own;
  return request.hitsAddend === 0 ? 1 : request.hitsAddend;
}

/** The status of a descriptor no rule decided (unknown domain, empty descriptor, replaced, no rule). */
export const UNLIMITED_OK: DescriptorStatus = { code: CODE.OK, limitRemaining: 0 };

/** One descriptor's status from its decision. */
export function statusOf(decision: Decision): DescriptorStatus {
  if (decision.action === 'allow') return { code: CODE.OK, limitRemaining: MAX_UINT32 };
  const shown = shownOf(decision);
  if (decision.action === 'deny') {
    return {
      code: CODE.OVER_LIMIT,
      currentLimit: { requestsPerUnit: 0, unit: UNIT.UNKNOWN, name: decision.rule ?? '' },
      limitRemaining: 0,
    };
  }
  if (shown === undefined) return { code: decision.allowed ? CODE.OK : CODE.OVER_LIMIT, limitRemaining: 0 };
  const untilReset = decision.allowed ? shown.resetMs : Math.max(decision.retryAfterMs, 0);
  return {
    code: decision.allowed ? CODE.OK : CODE.OVER_LIMIT,
    currentLimit: { requestsPerUnit: whole(shown.limit), unit: unitOf(shown.windowMs), name: shown.rule },
    limitRemaining: whole(shown.remaining),
    ...(Number.isFinite(untilReset) ? { durationUntilResetMs: untilReset } : {}),
  };
}

/** The rule a status shows: the denying one, else the most constrained enforcing rule a store answered. */
function shownOf(decision: Decision): RuleResult | undefined {
  if (!decision.allowed) return decision.results.find((result) => result.rule === decision.rule);
  return shownResult(decision.results);
}

const whole = (value: number): number =>
  value > 0 && Number.isFinite(value) ? Math.min(Math.floor(value), MAX_UINT32) : 0;

/** Envoy's units name whole seconds, minutes, hours and days; any other window is UNKNOWN. */
function unitOf(windowMs: number): number {
  if (windowMs === 1000) return UNIT.SECOND;
  if (windowMs === 60_000) return UNIT.MINUTE;
  if (windowMs === 3_600_000) return UNIT.HOUR;
  if (windowMs === 86_400_000) return UNIT.DAY;
  return UNIT.UNKNOWN;
}

/**
 * The response: OVER_LIMIT when any descriptor is, and the headers the HTTP adapters send (draft RateLimit and
 * RateLimit-Policy of the shown rule; Retry-After, whole seconds and at least 1, when denied).
 */
export function responseOf(
  statuses: readonly DescriptorStatus[],
  decisions: readonly Decision[],
): RateLimitResponse {
  const denied = decisions.filter((decision) => !decision.allowed);
  const overall = statuses.some((status) => status.code === CODE.OVER_LIMIT) ? CODE.OVER_LIMIT : CODE.OK;
  return { overallCode: overall, statuses, responseHeadersToAdd: headersOf(decisions, denied) };
}

/** The fields the HTTP adapters send (`headers: 'draft'`): the longest-waiting denial's, else the shown rule's. */
function headersOf(
  decisions: readonly Decision[],
  denied: readonly Decision[],
): { key: string; value: string }[] {
  if (denied.length > 0) {
    const longest = denied.reduce((a, b) => (b.retryAfterMs > a.retryAfterMs ? b : a));
    const retry = retryAfterSeconds(longest);
    const fields = rateLimitHeaders(longest, 'draft');
    return headerList(retry === undefined ? fields : { ...fields, 'Retry-After': String(retry) });
  }
  const allowed = decisions[0];
  const shown = shownResult(decisions.flatMap((decision) => decision.results));
  return allowed === undefined || shown === undefined
    ? []
    : headerList(rateLimitHeaders(allowed, 'draft', shown));
}

const headerList = (fields: Record<string, string>) =>
  Object.entries(fields).map(([key, value]) => ({ key, value }));

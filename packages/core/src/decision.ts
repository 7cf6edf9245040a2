import type { PlannedCheck } from './plan.js';
import type { CheckResult, Decision, DecisionReason, Lease, RuleResult, StoreErrorKind } from './types.js';

/** What a store call produced: results, or the kind of failure that replaced them. */
export type StoreOutcome =
  | { readonly ok: true; readonly results: readonly CheckResult[] }
  | { readonly ok: false; readonly kind: StoreErrorKind };

/** Retry time given when a rule fails closed: the store cannot say, so ask for a short pause. */
const FAIL_CLOSED_RETRY_MS = 1000;

const NO_LEASES: readonly Lease[] = Object.freeze([]);

const REASON_BY_KIND: Record<StoreErrorKind, DecisionReason> = {
  timeout: 'timeout',
  error: 'store_error',
  breaker_open: 'breaker',
};

/**
 * Turns one planned check and its store answer (or failure) into a rule result. Object literals written out
 * in full: spreading a partial object into a larger literal is several microseconds per call in V8.
 */
export function ruleResult(planned: PlannedCheck, outcome: StoreOutcome, index: number): RuleResult {
  const { rule, check } = planned;
  if (!outcome.ok) {
    const allowed = rule.onStoreError === 'allow' || check.mode === 'shadow';
    return {
      rule: rule.name,
      mode: check.mode,
      windowMs: rule.params.windowMs,
      allowed,
      limit: rule.params.limit,
      remaining: 0,
      resetMs: 0,
      retryAfterMs: allowed ? 0 : FAIL_CLOSED_RETRY_MS,
      shadowDenied: false,
      failed: true,
    };
  }
  const r = outcome.results[index];
  if (r === undefined) throw new Error(`store returned no result for check ${index} (${rule.name})`);
  const shadowDenied = !r.allowed && check.mode === 'shadow';
  return {
    rule: rule.name,
    mode: check.mode,
    windowMs: rule.params.windowMs,
    allowed: r.allowed || shadowDenied,
    limit: r.limit,
    remaining: r.remaining,
    resetMs: r.resetMs,
    retryAfterMs: r.retryAfterMs,
    shadowDenied,
    failed: r.degraded !== undefined,
  };
}

/** The enforcing result that explains a denial: the longest wait wins. */
function denyingResult(results: readonly RuleResult[]): RuleResult | undefined {
  let worst: RuleResult | undefined;
  for (const r of results) {
    if (r.allowed || r.mode !== 'enforce') continue;
    if (worst === undefined || r.retryAfterMs > worst.retryAfterMs) worst = r;
  }
  return worst;
}

/** The enforcing result with the least room left, relative to its limit. */
function mostConstrained(results: readonly RuleResult[]): RuleResult | undefined {
  let best: RuleResult | undefined;
  let bestRatio = Number.POSITIVE_INFINITY;
  for (const r of results) {
    if (r.mode !== 'enforce' || r.failed) continue;
    const ratio = r.limit > 0 ? r.remaining / r.limit : 0;
    if (ratio < bestRatio) {
      best = r;
      bestRatio = ratio;
    }
  }
  return best;
}

/** Inputs of a decision besides the rule results. */
export interface DecisionParts {
  readonly results: readonly RuleResult[];
  readonly delayMs: number;
  readonly leases: readonly Lease[];
  readonly failure: StoreErrorKind | undefined;
  readonly version: string;
}

/** Combines rule results into the request's decision. */
export function buildDecision(parts: DecisionParts): Decision {
  const { results, failure } = parts;
  const denying = denyingResult(results);
  const shown = denying ?? mostConstrained(results);
  let failedOpen = false;
  for (const r of results) if (r.failed && r.allowed) failedOpen = true;
  let reason: DecisionReason = denying ? 'limit' : 'allowed';
  if (failure !== undefined && (failedOpen || denying?.failed)) reason = REASON_BY_KIND[failure];
  const allowed = denying === undefined;
  const retryAfterMs = denying ? denying.retryAfterMs : 0;
  const delayMs = denying ? 0 : parts.delayMs;
  const leases = denying ? NO_LEASES : parts.leases;
  const { version } = parts;
  if (shown === undefined) {
    const limit = Number.POSITIVE_INFINITY;
    return {
      allowed,
      retryAfterMs,
      delayMs,
      limit,
      remaining: limit,
      resetMs: 0,
      failedOpen,
      reason,
      results,
      leases,
      version,
    };
  }
  return {
    allowed,
    rule: shown.rule,
    retryAfterMs,
    delayMs,
    limit: shown.limit,
    remaining: shown.remaining,
    resetMs: shown.resetMs,
    failedOpen,
    reason,
    results,
    leases,
    version,
  };
}

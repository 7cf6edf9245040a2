import type { PlannedCheck } from './plan.js';
import type { CheckResult, Decision, DecisionReason, Lease, RuleResult, StoreErrorKind } from './types.js';

/** What a store call produced: results, or the kind of failure that replaced them. */
export type StoreOutcome =
  | { readonly ok: true; readonly results: readonly CheckResult[] }
  | { readonly ok: false; readonly kind: StoreErrorKind };

/** Retry time given when a rule fails closed: the store cannot say, so ask for a short pause. */
const FAIL_CLOSED_RETRY_MS = 1000;

const REASON_BY_KIND: Record<StoreErrorKind, DecisionReason> = {
  timeout: 'timeout',
  error: 'store_error',
  breaker_open: 'breaker',
};

/** Turns one planned check and its store answer (or failure) into a rule result. */
export function ruleResult(planned: PlannedCheck, outcome: StoreOutcome, index: number): RuleResult {
  const { rule, check } = planned;
  const base = { rule: rule.name, mode: check.mode, windowMs: rule.params.windowMs };
  if (!outcome.ok) {
    const allowed = rule.onStoreError === 'allow' || check.mode === 'shadow';
    const retryAfterMs = allowed ? 0 : FAIL_CLOSED_RETRY_MS;
    const limit = rule.params.limit;
    return {
      ...base,
      allowed,
      limit,
      remaining: 0,
      resetMs: 0,
      retryAfterMs,
      shadowDenied: false,
      failed: true,
    };
  }
  const r = outcome.results[index];
  if (r === undefined) throw new Error(`store returned no result for check ${index} (${rule.name})`);
  const shadowDenied = !r.allowed && check.mode === 'shadow';
  return {
    ...base,
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
  const failedOpen = results.some((r) => r.failed && r.allowed);
  let reason: DecisionReason = denying ? 'limit' : 'allowed';
  if (failure !== undefined && (failedOpen || denying?.failed)) reason = REASON_BY_KIND[failure];
  return {
    allowed: denying === undefined,
    ...(shown ? { rule: shown.rule } : {}),
    retryAfterMs: denying ? denying.retryAfterMs : 0,
    delayMs: denying ? 0 : parts.delayMs,
    limit: shown ? shown.limit : Number.POSITIVE_INFINITY,
    remaining: shown ? shown.remaining : Number.POSITIVE_INFINITY,
    resetMs: shown ? shown.resetMs : 0,
    failedOpen,
    reason,
    results,
    leases: denying ? [] : parts.leases,
    version: parts.version,
  };
}

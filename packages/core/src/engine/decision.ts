import type { Decision, DecisionReason, RuleResult } from '../observe/contract.js';
import type { CompiledRule, Descriptors, Mode, RuleScope } from '../rules/contract.js';
import type { CheckResult, Lease, StoreErrorKind } from '../store/contract.js';
import { chargeLease } from './outcome.js';
import type { PlannedCheck } from './plan.js';

/** What a store call produced: results, or the kind of failure that replaced them. */
export type StoreOutcome =
  | { readonly ok: true; readonly results: readonly CheckResult[] }
  | { readonly ok: false; readonly kind: StoreErrorKind };

/** Retry time given when a rule fails closed: the store cannot say, so ask for a short pause. */
const FAIL_CLOSED_RETRY_MS = 1000;

/** The leases of a decision that holds none. */
export const NO_LEASES: readonly Lease[] = Object.freeze([]);

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
      fallback: false,
    };
  }
  const r = outcome.results[index];
  if (r === undefined) throw new Error(`store returned no result for check ${index} (${rule.name})`);
  return countedResult(rule, check.mode, r);
}

/** A rule's result from its store's answer to its check, made in `mode`. */
export function countedResult(rule: CompiledRule, mode: Mode, r: CheckResult): RuleResult {
  const shadowDenied = !r.allowed && mode === 'shadow';
  const result: RuleResult = {
    rule: rule.name,
    mode,
    windowMs: rule.params.windowMs,
    allowed: r.allowed || shadowDenied,
    limit: r.limit,
    remaining: r.remaining,
    resetMs: r.resetMs,
    retryAfterMs: r.retryAfterMs,
    shadowDenied,
    failed: r.degraded !== undefined,
    fallback: r.degraded !== undefined,
  };
  // Optional fields are set in place: a spread would copy the result again on every settling request.
  const extra = result as { settles?: true; violations?: RuleResult['violations'] };
  if (rule.settle === true) extra.settles = true;
  if (r.violations !== undefined) extra.violations = r.violations;
  return r.bannedUntil === undefined && r.replayed === undefined ? result : withPolicy(result, r);
}

/** A rule result with what its policy reported: a ban (and whether this denial started it), or a replay. */
function withPolicy(result: RuleResult, r: CheckResult): RuleResult {
  if (r.replayed === true) return { ...result, replayed: true };
  return { ...result, bannedUntil: r.bannedUntil!, banStarted: r.banStarted === true };
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
  let reason: DecisionReason = denying ? (denying.bannedUntil === undefined ? 'limit' : 'ban') : 'allowed';
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
  const decision: Decision = {
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
  // A ban answers with when it ends: the denying rule's.
  return denying?.bannedUntil === undefined ? decision : { ...decision, bannedUntil: denying.bannedUntil };
}

/** What one check is deciding: the matched rules split by store, handed from planning to deciding. */
export interface PlannedRequest {
  readonly descriptors: Descriptors;
  readonly version: string;
  readonly now: number;
  /** Checks of the limiter's store. */
  readonly remote: readonly PlannedCheck[];
  /** Checks of `scope: local` rules, counted in process. */
  readonly local: readonly PlannedCheck[];
  /** Results decided without a store (shadow deny rules), added after the counted ones. */
  readonly extra?: readonly RuleResult[];
}

/** The decision of a request from its two stores' outcomes; pure. */
export function decideRequest(
  request: PlannedRequest,
  storeOutcome: StoreOutcome,
  localOutcome: StoreOutcome,
): Decision {
  const { remote, local, extra } = request;
  const results: RuleResult[] = new Array(remote.length + local.length);
  const delayMs = Math.max(
    collectResults(results, 0, remote, storeOutcome),
    collectResults(results, remote.length, local, localOutcome),
  );
  if (extra !== undefined) results.push(...extra);
  return buildDecision({
    results,
    delayMs,
    leases: heldLeases(request, storeOutcome, localOutcome),
    failure: failureOf(storeOutcome) ?? failureOf(localOutcome),
    version: request.version,
  });
}

/**
 * What the request committed and holds in both stores (concurrency leases, leaky_bucket places). A denied
 * decision holds none, but one store may have committed while the other denied: those go back at once.
 */
export function heldLeases(
  request: PlannedRequest,
  storeOutcome: StoreOutcome,
  localOutcome: StoreOutcome,
): readonly Lease[] {
  const remoteLeases = leasesOf(request.remote, storeOutcome, 'store', request.now);
  const localLeases = leasesOf(request.local, localOutcome, 'local', request.now);
  if (localLeases.length === 0) return remoteLeases;
  return remoteLeases.length === 0 ? localLeases : [...remoteLeases, ...localLeases];
}

/** Writes the rule results of one store's checks from `offset`; returns the longest leaky_bucket delay. */
function collectResults(
  results: RuleResult[],
  offset: number,
  planned: readonly PlannedCheck[],
  outcome: StoreOutcome,
): number {
  let delayMs = 0;
  const refused = outcome.ok && committedNothing(outcome.results, planned, plannedMode);
  for (let i = 0; i < planned.length; i++) {
    const result = ruleResult(planned[i]!, outcome, i);
    results[offset + i] = refused ? uncounted(result, planned[i]!.check.cost) : result;
    if (outcome.ok) delayMs = Math.max(delayMs, outcome.results[i]?.delayMs ?? 0);
  }
  return delayMs;
}

const plannedMode = (planned: PlannedCheck): Mode => planned.check.mode;

/**
 * Whether a store's answers committed nothing: one of its enforced checks denied (the evaluator writes none).
 * `checks[i]` is what `answers[i]` answers, `modeOf` reads its mode: a function made once, not per call.
 */
export function committedNothing<T>(
  answers: readonly CheckResult[],
  checks: readonly T[],
  modeOf: (check: T) => Mode,
): boolean {
  for (let i = 0; i < answers.length; i++) {
    const answer = answers[i]!;
    const check = checks[i];
    if (
      !answer.allowed &&
      check !== undefined &&
      modeOf(check) === 'enforce' &&
      answer.degraded === undefined
    )
      return true;
  }
  return false;
}

/**
 * A store answers each allowed check of a refused call as if it had counted, yet commits none: such a result
 * gets its cost back, so a refused request shows what each other rule really has left.
 */
export function uncounted(result: RuleResult, cost: number): RuleResult {
  if (!result.allowed || result.shadowDenied || result.failed || result.replayed === true || !(cost > 0))
    return result;
  return { ...result, remaining: Math.min(result.limit, result.remaining + cost) };
}

/**
 * What the request holds in one store: concurrency leases, the charges of `count` rules (given back by the
 * response's status), and leaky_bucket places it may give back.
 */
function leasesOf(
  planned: readonly PlannedCheck[],
  outcome: StoreOutcome,
  scope: RuleScope,
  now: number,
): readonly Lease[] {
  if (!outcome.ok) return NO_LEASES;
  let leases: Lease[] | undefined;
  for (let i = 0; i < planned.length; i++) {
    const { check } = planned[i]!;
    const result = outcome.results[i];
    // Nothing was committed when an enforcing check denied.
    if (!result?.allowed && check.mode === 'enforce') return NO_LEASES;
    if (!result?.allowed) continue;
    const { rule, tag, algorithm } = check;
    let lease: Lease | undefined;
    const count = planned[i]!.rule.count;
    if (check.leaseId !== undefined)
      lease = { rule, tag, algorithm, id: check.leaseId, scope, leaseMs: check.params.windowMs };
    // Reserve and settle: the estimate charged is settled by limiter.settle (engine/settle.ts).
    else if (planned[i]!.rule.settle === true && result.replayed !== true)
      lease = chargeLease(check, scope, now, result.resetMs, undefined, true);
    // Counting by outcome: the charge goes back if the response's status is not one the rule counts (a
    // replayed retry was charged nothing).
    else if (count !== undefined && check.cost > 0 && result.replayed !== true)
      lease = chargeLease(check, scope, now, result.resetMs, count);
    // A queued leaky_bucket request holds its place until served; if it never is, the place goes back.
    else if ((result.delayMs ?? 0) > 0) {
      lease = { rule, tag, algorithm, id: '', scope, refund: { cost: check.cost, params: check.params } };
    }
    if (lease === undefined) continue;
    if (leases === undefined) leases = [lease];
    else leases.push(lease);
  }
  return leases ?? NO_LEASES;
}

/** The failure a store outcome reports: its own, or its fallback's (`degraded` results). */
function failureOf(outcome: StoreOutcome): StoreErrorKind | undefined {
  if (!outcome.ok) return outcome.kind;
  for (const result of outcome.results) if (result.degraded !== undefined) return result.degraded;
  return undefined;
}

/** A deny rule's result: nothing counted; `shadow` reports a would-be denial and lets the request through. */
export function denyResult(rule: CompiledRule, shadow: boolean): RuleResult {
  return {
    rule: rule.name,
    mode: shadow ? 'shadow' : 'enforce',
    windowMs: 0,
    allowed: shadow,
    limit: 0,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: Number.POSITIVE_INFINITY,
    shadowDenied: shadow,
    failed: false,
    fallback: false,
    action: 'deny',
  };
}

/**
 * The decision of an action rule, made without a store call: refused by a deny rule (no wait helps, so no
 * Retry-After), or exempted from every rule by an allow rule (no counter, so no RateLimit numbers).
 */
export function actionDecision(
  rule: CompiledRule,
  version: string,
  shadowDenies: readonly RuleResult[],
): Decision {
  const deny = rule.action === 'deny';
  return {
    allowed: !deny,
    rule: rule.name,
    retryAfterMs: deny ? Number.POSITIVE_INFINITY : 0,
    delayMs: 0,
    limit: deny ? 0 : Number.POSITIVE_INFINITY,
    remaining: deny ? 0 : Number.POSITIVE_INFINITY,
    resetMs: 0,
    failedOpen: false,
    reason: deny ? 'deny' : 'allowed',
    results: deny ? [denyResult(rule, false), ...shadowDenies] : shadowDenies,
    leases: NO_LEASES,
    version,
    action: deny ? 'deny' : 'allow',
  };
}

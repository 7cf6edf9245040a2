import type { Decision, RuleResult } from '../observe/contract.js';
import type { CompiledRule, Descriptors } from '../rules/contract.js';
import type { Check, CheckResult } from '../store/contract.js';
import { costFor } from './cost.js';
import {
  buildDecision,
  committedNothing,
  countedResult,
  decideRequest,
  NO_LEASES,
  type PlannedRequest,
  type StoreOutcome,
  uncounted,
} from './decision.js';
import type { RequestPath } from './pathParts.js';
import { effectiveMode, type PlannedCheck } from './plan.js';
import { NOTHING_DONE } from './storeCall.js';

/**
 * The lean way through a check, for a plain table (`CompiledRules.plain`: every rule only counts) whose store
 * answers in process: the decision `decideOne` makes, without its plan, outcome and request objects. An answer
 * out of the ordinary (a failure, a queued or degraded result) is decided the general way (decision.ts).
 */
export function decidePlain(
  path: RequestPath,
  descriptors: Descriptors,
  codeCost: number,
  now: number,
): Decision {
  const matched = path.table.match(descriptors, now, path.lists);
  // The matched list itself while every rule has a tag (the usual case), and checks in an array of its exact
  // size: a push onto an empty array reserves 17 places.
  let rules: readonly CompiledRule[] = matched;
  let checks: Check[] = new Array(matched.length);
  let count = 0;
  for (let i = 0; i < matched.length; i++) {
    const rule = matched[i]!;
    const cached = path.tags.cachedTagFor(rule, descriptors);
    // A rule whose key has no tag counts nothing, as in planChecks (a matched rule always has one).
    if (cached === undefined) {
      if (rules === matched) rules = matched.slice(0, i);
      continue;
    }
    if (rules !== matched) (rules as CompiledRule[]).push(rule);
    checks[count++] = plainCheck(rule, cached.tag, descriptors, codeCost, path.dryRun, cached);
  }
  if (count < checks.length) checks = checks.slice(0, count);
  const decision = decided(path, rules, checks, descriptors, now);
  path.watch?.sawChecks(checks, decision.results, descriptors);
  path.observer.onDecision(decision, descriptors);
  return decision;
}

/** A plain rule's check: the shape planChecks gives every check, with no lease, policy or idempotency id. */
function plainCheck(
  rule: CompiledRule,
  tag: string,
  descriptors: Descriptors,
  codeCost: number,
  dryRun: boolean,
  hint: Check['hint'],
): Check {
  return {
    rule: rule.name,
    tag,
    algorithm: rule.algorithm,
    params: rule.params,
    cost: costFor(rule.cost, descriptors, codeCost),
    mode: effectiveMode(rule, tag, dryRun),
    leaseId: undefined,
    policy: undefined,
    idempotencyId: undefined,
    hint,
  };
}

const modeOf = (check: Check): Check['mode'] => check.mode;

/** The decision on the store's answer to the checks. */
function decided(
  path: RequestPath,
  rules: readonly CompiledRule[],
  checks: readonly Check[],
  descriptors: Descriptors,
  now: number,
): Decision {
  const version = path.table.version;
  let answers: readonly CheckResult[];
  try {
    answers = checks.length === 0 ? [] : path.calls.store.inProcess!.evaluateNow(checks, now);
  } catch (error) {
    return generally(rules, checks, path.calls.store.failed(error), descriptors, version, now);
  }
  const results: RuleResult[] = new Array(rules.length);
  for (let i = 0; i < rules.length; i++) {
    const answer = answers[i];
    // A queued request holds a place and a fallback's answer reports its failure: decision.ts knows both.
    if (answer === undefined || (answer.delayMs ?? 0) > 0 || answer.degraded !== undefined)
      return generally(rules, checks, { ok: true, results: answers }, descriptors, version, now);
    results[i] = countedResult(rules[i]!, checks[i]!.mode, answer);
  }
  if (committedNothing(answers, checks, modeOf))
    for (let i = 0; i < results.length; i++) results[i] = uncounted(results[i]!, checks[i]!.cost);
  return buildDecision({ results, delayMs: 0, leases: NO_LEASES, failure: undefined, version });
}

/** The decision as decideOne makes it, for an answer the lean way leaves to it. */
function generally(
  rules: readonly CompiledRule[],
  checks: readonly Check[],
  outcome: StoreOutcome,
  descriptors: Descriptors,
  version: string,
  now: number,
): Decision {
  const remote: PlannedCheck[] = rules.map((rule, i) => ({ rule, check: checks[i]! }));
  const request: PlannedRequest = { descriptors, version, now, remote, local: [] };
  return decideRequest(request, outcome, NOTHING_DONE);
}

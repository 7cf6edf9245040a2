import { isPromise, type Maybe } from '../base/maybe.js';
import type { Lists } from '../lists/contract.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { RegionalBudgets } from '../regions/index.js';
import { resolveActions } from '../rules/actions.js';
import type { CompiledRule, CompiledRules, Descriptors, RuleScope } from '../rules/contract.js';
import type { Lease } from '../store/contract.js';
import { assertCost } from './cost.js';
import {
  actionDecision,
  decideRequest,
  denyResult,
  heldLeases,
  type PlannedRequest,
  type StoreOutcome,
} from './decision.js';
import type { LeasePlan } from './localLeases.js';
import { givenBackAtEnd, givenBackOnCancel } from './outcome.js';
import type { RequestPath } from './pathParts.js';
import { decidePlain } from './plainLane.js';
import { type PlannedCheck, planChecks } from './plan.js';

/** Options of one check. */
export interface CheckOptions {
  /** Cost given in code; a rule's own `cost` spec wins. Default 1. */
  cost?: number;
  /** Extra (route-level) rules, evaluated in the same store call as the limiter's own. */
  rules?: CompiledRules;
  /** false: evaluate only `rules`, not the limiter's own table. Default true. */
  global?: boolean;
}

/** Options of a check that gives none. */
export const NO_OPTIONS: CheckOptions = Object.freeze({});
const NO_CHECKS: readonly PlannedCheck[] = Object.freeze([]);
const NO_RULES: readonly CompiledRule[] = Object.freeze([]);

/** Decides one request; synchronous up to the store calls, which are awaited only when they are remote. */
export function decideOne(
  path: RequestPath,
  descriptors: Descriptors,
  opts: CheckOptions = NO_OPTIONS,
): Maybe<Decision> {
  const codeCost = opts.cost === undefined ? 1 : assertCost(opts.cost);
  const rules = path.table;
  const now = path.clock();
  if (takesPlainLane(path, opts)) return decidePlain(path, descriptors, codeCost, now);
  let matched = matchedRules(rules, descriptors, opts, now, path.lists);
  let extra: readonly RuleResult[] | undefined;
  // Only tables with deny or allow rules look for them: others pay nothing.
  if (rules.actions === true || opts.rules?.actions === true) {
    const acted = actOn(matched, rules.version, path.dryRun);
    if (acted.decision !== undefined) {
      path.observer.onDecision(acted.decision, descriptors);
      return acted.decision;
    }
    matched = acted.counted;
    extra = acted.extra;
  }
  let planned = planChecks(matched, descriptors, codeCost, path.tags, path.dryRun);
  // Only tables with adaptive or priority rules scale limits: others pay nothing.
  if (path.adaptive !== undefined && (rules.adaptive === true || opts.rules?.adaptive === true))
    planned = path.adaptive.scale(planned, descriptors, now);
  if (path.regions !== undefined) planned = path.regions.scale(planned, now);
  const [remote, local] = byScope(planned);
  const request: PlannedRequest = { descriptors, version: rules.version, now, remote, local, extra };
  // Rules with local leases send batch-sized checks, or none when their pool serves them.
  const plan = path.pools.take(remote, now);
  const sent = path.calls.store.outcome(plan === undefined ? remote : plan.send, now);
  const fromLocal = path.calls.local.outcome(local, now);
  if (!isPromise(fromLocal)) {
    if (!isPromise(sent)) return settle(path, request, plan, sent, fromLocal);
    // The usual remote case: one promise to wait on, no Promise.all.
    return sent.then((outcome) => settle(path, request, plan, outcome, fromLocal));
  }
  return Promise.all([sent, fromLocal]).then(([s, l]) => settle(path, request, plan, s, l));
}

/**
 * True when the check may take the lean path (plainLane.ts): a plain table, no route rules, a store that
 * answers in process, and no adaptive rule checked since the limiter started (its factors outlive a reload).
 */
function takesPlainLane(path: RequestPath, opts: CheckOptions): boolean {
  return (
    path.table.plain === true &&
    opts.rules === undefined &&
    opts.global !== false &&
    path.calls.store.inProcess !== undefined &&
    path.adaptive?.active !== true
  );
}

/** What the deny and allow rules among the matched ones settle: a decision, or the rules left to count. */
export type Acted =
  | { readonly decision: Decision; readonly counted?: undefined; readonly extra?: undefined }
  | {
      readonly decision?: undefined;
      readonly counted: readonly CompiledRule[];
      /** Shadow denials to show beside the counted rules' results. */
      readonly extra: readonly RuleResult[] | undefined;
    };

/** Settles deny and allow rules: a deny answers with no store call; an allow exempts from other rules. */
export function actOn(matched: readonly CompiledRule[], version: string, dryRun: boolean): Acted {
  const acted = resolveActions(matched, dryRun);
  const shadowDenies = acted.shadowDenies.map((rule) => denyResult(rule, true));
  if (acted.decidedBy !== undefined)
    return { decision: actionDecision(acted.decidedBy, version, shadowDenies) };
  return { counted: acted.counted, extra: shadowDenies.length > 0 ? shadowDenies : undefined };
}

/** The decision, and what it sets off: pool refunds, leases handed back or counted, the observer. */
export function settle(
  path: RequestPath,
  request: PlannedRequest,
  plan: LeasePlan | undefined,
  sent: StoreOutcome,
  localOutcome: StoreOutcome,
): Decision {
  const { pools, observer } = path;
  let storeOutcome = plan === undefined ? sent : pools.settle(request.remote, plan, sent, request.now);
  if (path.regions !== undefined)
    storeOutcome = regional(path.regions, request.remote, storeOutcome, request.now);
  let decision = decideRequest(request, storeOutcome, localOutcome);
  if (path.adaptive?.active === true) decision = path.adaptive.settled(decision, request.descriptors);
  if (path.regions !== undefined) decision = path.regions.mark(decision);
  if (!decision.allowed && plan !== undefined) pools.refund(plan);
  // One store may have committed leases while the other denied: hand them back at once.
  if (!decision.allowed) {
    const held = heldLeases(request, storeOutcome, localOutcome);
    if (held.length > 0) void releaseLeases(path, held, request.now);
    // An enforced ban starts only with a denial: allowed requests pay nothing for them (shadow bans show in
    // the decision's results, not here).
    for (const r of decision.results)
      if (r.banStarted === true && r.mode === 'enforce') observer.onBan(r.rule, r.bannedUntil!);
  } else {
    for (const lease of decision.leases) if (!lease.refund) observer.onLeases(lease.rule, 1);
  }
  path.watch?.sawPlanned(request.remote, request.local, decision.results, request.descriptors);
  observer.onDecision(decision, request.descriptors);
  return decision;
}

/** A store outcome with its global rules' answers noted by the region's budgets and shown as the global budget. */
export function regional(
  regions: RegionalBudgets,
  remote: readonly PlannedCheck[],
  outcome: StoreOutcome,
  now: number,
): StoreOutcome {
  return outcome.ok ? { ok: true, results: regions.settled(remote, outcome.results, now) } : outcome;
}

/** Gives leases back to the store that holds each (one call per store); never rejects. */
export async function releaseLeases(path: RequestPath, leases: readonly Lease[], now: number): Promise<void> {
  const inScope = (scope: RuleScope) => leases.filter((l) => l.scope === scope);
  const remote = inScope('store');
  const local = inScope('local');
  await Promise.allSettled([
    remote.length === 0 ? undefined : path.stores.store.release(remote, now),
    local.length === 0 ? undefined : path.stores.local.release(local, now),
  ]);
  for (const lease of leases) if (!lease.refund && !lease.owed) path.observer.onLeases(lease.rule, -1);
}

/** The limiter's own rules and the check's extra (route) rules that apply to a request. */
export function matchedRules(
  rules: CompiledRules,
  descriptors: Descriptors,
  opts: CheckOptions,
  now: number,
  lists: Lists | undefined,
): readonly CompiledRule[] {
  const own = opts.global === false ? NO_RULES : rules.match(descriptors, now, lists);
  const extra = opts.rules ? opts.rules.match(descriptors, now, lists) : NO_RULES;
  return extra.length === 0 ? own : own.length === 0 ? extra : [...own, ...extra];
}

/** Splits checks by where they count: [the limiter's store, the local store]. Usually all go to the store. */
export function byScope(
  planned: readonly PlannedCheck[],
): [readonly PlannedCheck[], readonly PlannedCheck[]] {
  let local = 0;
  for (const p of planned) if (p.rule.scope === 'local') local++;
  if (local === 0) return [planned, NO_CHECKS];
  if (local === planned.length) return [NO_CHECKS, planned];
  return [planned.filter((p) => p.rule.scope !== 'local'), planned.filter((p) => p.rule.scope === 'local')];
}

/**
 * Which of a decision's leases a release or a cancel still has to give back, so that each is given back
 * once however often either is called: `release` the leases the response held; `cancel` (the request was
 * never served) also its leaky_bucket places, and the leases unless a release gave them back already.
 */
export class LeaseLedger {
  readonly #released = new WeakSet<Decision>();
  readonly #cancelled = new WeakSet<Decision>();

  /** The leases and refunds to give back for `release(decision, status)`; none the second time. */
  toRelease(decision: Decision, status?: number): readonly Lease[] {
    if (this.#released.has(decision) || decision.leases.length === 0) return NO_LEASES;
    this.#released.add(decision);
    return givenBackAtEnd(decision.leases, status);
  }

  /** The leases and places to give back for `cancel(decision)`; none the second time. */
  toCancel(decision: Decision): readonly Lease[] {
    if (this.#cancelled.has(decision) || decision.leases.length === 0) return NO_LEASES;
    this.#cancelled.add(decision);
    const wasReleased = this.#released.has(decision);
    this.#released.add(decision);
    return givenBackOnCancel(decision.leases, wasReleased);
  }
}

const NO_LEASES: readonly Lease[] = Object.freeze([]);

import { isPromise, type Maybe } from '../base/maybe.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { CompiledRule, CompiledRules, Descriptors } from '../rules/contract.js';
import { assertCost } from './cost.js';
import { decideRequest, heldLeases, type PlannedRequest, type StoreOutcome } from './decision.js';
import type { LeasePlan } from './localLeases.js';
import type { RequestPath } from './pathParts.js';
import { type PlannedCheck, planChecks } from './plan.js';
import { actOn, byScope, matchedRules, NO_OPTIONS, regional, releaseLeases } from './requestPath.js';

/** One descriptor set of a `checkMany` call, with the units it spends. */
export interface CheckSet {
  readonly descriptors: Descriptors;
  /** Default 1; a rule's own `cost` spec wins. */
  readonly cost?: number;
}

/** Options of `checkMany`, for every set alike. */
export interface CheckManyOptions {
  /** Extra (route-level) rules, matched against every set. */
  readonly rules?: CompiledRules;
  /** false: match only `rules`, not the limiter's own table. Default true. */
  readonly global?: boolean;
  /**
   * Rules that leave others out (Envoy's `replaces`): rule name -> names of the rules that, when it matches
   * any set of the call, are not counted for any set. Applied to the one table the call matched against.
   */
  readonly replaces?: ReadonlyMap<string, readonly string[]>;
}

const NO_LEASES: Decision['leases'] = Object.freeze([]);

/** One set as planned: its request for decideRequest, or the decision an action rule made with no store. */
type PlannedSet = {
  readonly descriptors: Descriptors;
  readonly remoteAt: number;
  readonly localAt: number;
} & (
  | { readonly acted: Decision; readonly request?: undefined }
  | { readonly acted?: undefined; readonly request: PlannedRequest }
);

/**
 * Decides several descriptor sets as one request (the descriptors of one Envoy call): one rule table for all,
 * every set's checks in ONE call per store, all or nothing. When any enforcing check of any set denies (or a
 * `deny` rule refuses one set), nothing of any set is counted. One decision per set, in order: each says
 * whether its own rules allowed it; the call was counted only when every decision is allowed.
 */
export function decideMany(
  path: RequestPath,
  sets: readonly CheckSet[],
  opts: CheckManyOptions = NO_OPTIONS,
): Maybe<Decision[]> {
  const costs = sets.map((set) => (set.cost === undefined ? 1 : assertCost(set.cost)));
  const table = path.table;
  const now = path.clock();
  const matched = withoutReplaced(
    sets.map((set) => matchedRules(table, set.descriptors, opts, now, path.lists)),
    opts.replaces,
  );
  const remote: PlannedCheck[] = [];
  const local: PlannedCheck[] = [];
  const planned = sets.map((set, i) =>
    planSet(path, table, set.descriptors, matched[i]!, costs[i]!, now, opts, remote, local),
  );
  const refused = planned.some((p) => p.acted !== undefined && !p.acted.allowed);
  // A deny rule answers with no store call: the other sets are then counted nowhere.
  if (refused)
    return told(
      path,
      planned,
      planned.map((p) => p.acted ?? uncounted(p.request!)),
    );
  const plan = path.pools.take(remote, now);
  const sent = path.calls.store.outcome(plan === undefined ? remote : plan.send, now);
  const fromLocal = path.calls.local.outcome(local, now);
  const all: PlannedRequest = { descriptors: {}, version: table.version, now, remote, local };
  const done = (s: StoreOutcome, l: StoreOutcome) => settleMany(path, planned, all, plan, s, l);
  if (!isPromise(sent) && !isPromise(fromLocal)) return done(sent, fromLocal);
  return Promise.all([sent, fromLocal]).then(([s, l]) => done(s, l));
}

/** Each set's matched rules, less those a matched rule of any set replaces. */
function withoutReplaced(
  matched: readonly (readonly CompiledRule[])[],
  replaces: ReadonlyMap<string, readonly string[]> | undefined,
): readonly (readonly CompiledRule[])[] {
  if (replaces === undefined || replaces.size === 0) return matched;
  const lifted = new Set<string>();
  for (const rules of matched)
    for (const rule of rules) for (const name of replaces.get(rule.name) ?? []) lifted.add(name);
  if (lifted.size === 0) return matched;
  return matched.map((rules) => rules.filter((rule) => !lifted.has(rule.name)));
}

/** One set's checks, appended to the call's remote and local lists; an action rule may decide it instead. */
function planSet(
  path: RequestPath,
  table: CompiledRules,
  descriptors: Descriptors,
  matched: readonly CompiledRule[],
  codeCost: number,
  now: number,
  opts: CheckManyOptions,
  remote: PlannedCheck[],
  local: PlannedCheck[],
): PlannedSet {
  const at = { descriptors, remoteAt: remote.length, localAt: local.length };
  let counted = matched;
  let extra: readonly RuleResult[] | undefined;
  if (table.actions === true || opts.rules?.actions === true) {
    const acted = actOn(matched, table.version, path.dryRun);
    if (acted.decision !== undefined) return { acted: acted.decision, ...at };
    counted = acted.counted;
    extra = acted.extra;
  }
  let checks = planChecks(counted, descriptors, codeCost, path.tags, path.dryRun);
  if (path.adaptive !== undefined && (table.adaptive === true || opts.rules?.adaptive === true))
    checks = path.adaptive.scale(checks, descriptors, now);
  if (path.regions !== undefined) checks = path.regions.scale(checks, now);
  const [r, l] = byScope(checks);
  remote.push(...r);
  local.push(...l);
  return { request: { descriptors, version: table.version, now, remote: r, local: l, extra }, ...at };
}

/** The decision of a set left uncounted because a deny rule refused another set of the call. */
function uncounted(request: PlannedRequest): Decision {
  const none: StoreOutcome = { ok: true, results: [] };
  return decideRequest({ ...request, remote: [], local: [] }, none, none);
}

/** Tells the observer each set's decision, with that set's descriptors. */
function told(path: RequestPath, planned: readonly PlannedSet[], decisions: Decision[]): Decision[] {
  for (let i = 0; i < planned.length; i++) {
    const { request, descriptors } = planned[i]!;
    if (request !== undefined)
      path.watch?.sawPlanned(request.remote, request.local, decisions[i]!.results, descriptors);
    path.observer.onDecision(decisions[i]!, descriptors);
  }
  return decisions;
}

/** Every set's decision from the call's two outcomes; when any set denied, none holds anything. */
function settleMany(
  path: RequestPath,
  planned: readonly PlannedSet[],
  all: PlannedRequest,
  plan: LeasePlan | undefined,
  sent: StoreOutcome,
  fromLocal: StoreOutcome,
): Decision[] {
  let storeOutcome = plan === undefined ? sent : path.pools.settle(all.remote, plan, sent, all.now);
  if (path.regions !== undefined) storeOutcome = regional(path.regions, all.remote, storeOutcome, all.now);
  const decisions = planned.map((p) => {
    if (p.acted !== undefined) return p.acted;
    const { request } = p;
    const own = decideRequest(
      request,
      slice(storeOutcome, p.remoteAt, request.remote.length),
      slice(fromLocal, p.localAt, request.local.length),
    );
    const adapted = path.adaptive?.active === true ? path.adaptive.settled(own, request.descriptors) : own;
    return path.regions === undefined ? adapted : path.regions.mark(adapted);
  });
  if (decisions.every((decision) => decision.allowed)) {
    for (const decision of decisions)
      for (const lease of decision.leases) if (!lease.refund) path.observer.onLeases(lease.rule, 1);
    return told(path, planned, decisions);
  }
  if (plan !== undefined) path.pools.refund(plan);
  // Taken over the whole call: a store where any enforcing check denied committed nothing, the other may have.
  const held = heldLeases(all, storeOutcome, fromLocal);
  if (held.length > 0) void releaseLeases(path, held, all.now);
  for (const decision of decisions)
    for (const r of decision.results)
      if (r.banStarted === true && r.mode === 'enforce') path.observer.onBan(r.rule, r.bannedUntil!);
  return told(path, planned, decisions.map(holdingNothing));
}

/** One set's share of a call's outcome. */
function slice(outcome: StoreOutcome, from: number, length: number): StoreOutcome {
  if (!outcome.ok) return outcome;
  return { ok: true, results: outcome.results.slice(from, from + length) };
}

const holdingNothing = (decision: Decision): Decision =>
  decision.leases.length === 0 ? decision : { ...decision, leases: NO_LEASES };

import { assertCost } from './cost.js';
import {
  actionDecision,
  decideRequest,
  denyResult,
  heldLeases,
  type PlannedRequest,
  type StoreOutcome,
} from './decision.js';
import { ConfigError } from './errors.js';
import { TagCache, tagFor } from './keys.js';
import { type LeasePlan, LocalLeases } from './localLeases.js';
import { guardObserver } from './observe/guarded.js';
import { type LimiterHealth, limiterHealth } from './observe/health.js';
import { LIMITER_NOTICES, type LimiterNotice, misuseWatch, type NoticeLogger } from './observe/misuse.js';
import { effectiveMode, type PlannedCheck, planChecks } from './plan.js';
import { type ActionOutcome, resolveActions } from './rules/actions.js';
import { assertNotPromise, isCompiledRules, isRulesSource } from './rules/resolve.js';
import { isPromise, type Maybe, StoreCaller } from './storeCall.js';
import { MemoryStore } from './stores/memory.js';
import type {
  CompiledRule,
  CompiledRules,
  Decision,
  Descriptors,
  Lease,
  Lists,
  Mode,
  Observer,
  RuleAction,
  RuleResult,
  RuleScope,
  RulesSource,
  Store,
} from './types.js';

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** The compiled rule table (see `resolveRules` for paths and plain objects), or a source that reloads it. */
  rules: CompiledRules | RulesSource;
  /** Where counters live; default: a MemoryStore. */
  store?: Store;
  /** Counters of `scope: local` rules; default: a MemoryStore of this process. */
  localStore?: Store;
  /** Milliseconds since the epoch; default `Date.now`. */
  clock?: () => number;
  observer?: Observer;
  /** Backstop timeout on each store call, in ms; default 1000. Remote stores keep their own, shorter one. */
  timeoutMs?: number;
  /** Secret for keyed (HMAC) counter tags, so hashed keys cannot be matched against guesses. */
  keySecret?: string;
  /**
   * Every rule behaves as `mode: shadow`: counted and reported (shadowDenied), never denied. For a first
   * deployment. Default false.
   */
  dryRun?: boolean;
  /** Where start-up and misuse notices go (each logged once, with a code); default `console`. */
  logger?: NoticeLogger;
  /** Notice codes not to log (`SLUICE_LIMITER_PER_REQUEST`, `SLUICE_STORE_SHARED`). */
  silence?: readonly LimiterNotice[];
  /**
   * Lists that rules name (`match: {ip: {list: blocked_ips}}`), by name: `fileList(path)`, `redisList(...)`.
   * Every list the rules name must be given; a rules reload naming a missing one is refused.
   */
  lists?: Lists;
}

/** Options of one check. */
export interface CheckOptions {
  /** Cost given in code; a rule's own `cost` spec wins. Default 1. */
  cost?: number;
  /** Extra (route-level) rules, evaluated in the same store call as the limiter's own. */
  rules?: CompiledRules;
  /** false: evaluate only `rules`, not the limiter's own table. Default true. */
  global?: boolean;
}

/** One rule that applies to a request, as `explain` shows it. */
export interface ExplainedRule {
  readonly rule: string;
  /** `limit` counts; `deny` refuses; `allow` exempts from other rules. */
  readonly action: RuleAction;
  /** The allow rule that exempts the request from this rule; the rule is then not evaluated. */
  readonly exemptedBy?: string;
  readonly algorithm: string;
  readonly key: readonly string[];
  /** Hashed counter tag, as stored; undefined when a key descriptor is missing. */
  readonly tag: string | undefined;
  readonly mode: Mode;
  /** Mode for this key after rollout. */
  readonly effectiveMode: Mode | undefined;
  readonly rollout: number;
  readonly scope: RuleScope;
}

/** What the limiter would evaluate for some descriptors, without calling a store. */
export interface Explanation {
  readonly version: string;
  readonly rules: readonly ExplainedRule[];
  /**
   * Set when an action rule decides the request before anything is counted: `deny` (refused by `rule`) or
   * `allow` (`rule` exempts it from every other rule). Precedence: allow, then deny, then limit.
   */
  readonly decidedBy?: { readonly rule: string; readonly action: 'deny' | 'allow' };
}

/** The engine: matches rules, evaluates them in one store call per store, decides. */
export interface Limiter {
  /** Decides one request. Never rejects because of the store; rejects only on an invalid `cost`. */
  check(descriptors: Descriptors, options?: CheckOptions): Promise<Decision>;
  /**
   * `check` without a promise where none is needed: the decision itself when every store involved answers
   * in process (MemoryStore, local rules), else a promise of it. Throws (not rejects) on an invalid `cost`.
   */
  decide(descriptors: Descriptors, options?: CheckOptions): Decision | Promise<Decision>;
  /** Releases a decision's concurrency leases when its response ends. Idempotent; never rejects. */
  release(decision: Decision): Promise<void>;
  /**
   * For a request given up before it was served (the client left while it waited): releases its leases and
   * gives its leaky_bucket places back. Idempotent; never rejects.
   */
  cancel(decision: Decision): Promise<void>;
  /** The rules and counter tags that apply to these descriptors now. */
  explain(descriptors: Descriptors, options?: CheckOptions): Explanation;
  /** Swaps the rule table atomically; checks in flight finish on the table they started with. */
  setRules(rules: CompiledRules): void;
  readonly rules: CompiledRules;
  readonly version: string;
  /**
   * The store's state for readiness probes and alerts (connected, breaker, pending calls, failing open since
   * when) and the count of failed observer hooks. Never throws; makes no store call.
   */
  health(): LimiterHealth;
  /** Closes both stores. */
  close(): Promise<void>;
}

function assertStore(store: unknown, name: string): asserts store is Store {
  const s = store as Partial<Store> | null;
  for (const method of ['evaluate', 'release', 'close'] as const) {
    if (typeof s?.[method] !== 'function') throw new ConfigError(`${name} must have a ${method}() method`);
  }
}

/** Creates a limiter. */
export function createLimiter(options: LimiterOptions): Limiter {
  const store = options.store ?? new MemoryStore();
  const localStore = options.localStore ?? new MemoryStore();
  assertStore(store, 'store');
  assertStore(localStore, 'localStore');
  const clock = options.clock ?? Date.now;
  const observer = guardObserver(options.observer);
  const timeoutMs = options.timeoutMs ?? 1000;
  const secret = options.keySecret;
  const dryRun = options.dryRun === true;
  assertRules(options.rules);
  const lists = assertLists(options.lists);
  const source = isRulesSource(options.rules) ? options.rules : undefined;
  let table = source ? source.current : (options.rules as CompiledRules);
  assertListsGiven(table, lists);
  const tags = new TagCache(secret);
  const pools = new LocalLeases();
  const remoteCalls = new StoreCaller(store, timeoutMs, observer, clock);
  const localCalls = new StoreCaller(localStore, timeoutMs, observer, clock);
  const released = new WeakSet<Decision>();
  const cancelled = new WeakSet<Decision>();
  const watched = misuseWatch.watch(
    { store, localStore },
    table,
    options.logger ?? console,
    silenced(options),
  );

  async function releaseLeases(leases: readonly Lease[], now: number): Promise<void> {
    const byScope = (scope: RuleScope) => leases.filter((l) => l.scope === scope);
    const calls = [byScope('store'), byScope('local')].map((group, i) =>
      group.length === 0 ? undefined : (i === 0 ? store : localStore).release(group, now),
    );
    await Promise.allSettled(calls);
    for (const lease of leases) if (!lease.refund) observer.onLeases(lease.rule, -1);
  }

  /** Decides one request; synchronous up to the store calls, which are awaited only when they are remote. */
  function decide(descriptors: Descriptors, opts: CheckOptions = NO_OPTIONS): Maybe<Decision> {
    const codeCost = opts.cost === undefined ? 1 : assertCost(opts.cost);
    const rules = table;
    const now = clock();
    let matched = matchedRules(rules, descriptors, opts, now, lists);
    let extra: readonly RuleResult[] | undefined;
    // Only tables with deny or allow rules look for them: others pay nothing.
    if (rules.actions === true || opts.rules?.actions === true) {
      const acted = resolveActions(matched, dryRun);
      const shadowDenies = acted.shadowDenies.map((rule) => denyResult(rule, true));
      if (acted.decidedBy !== undefined) {
        const decision = actionDecision(acted.decidedBy, rules.version, shadowDenies);
        observer.onDecision(decision, descriptors);
        return decision;
      }
      matched = acted.counted;
      if (shadowDenies.length > 0) extra = shadowDenies;
    }
    const planned = planChecks(matched, descriptors, codeCost, tags, dryRun);
    const [remote, local] = byScope(planned);
    const request: PlannedRequest = { descriptors, version: rules.version, now, remote, local, extra };
    // Rules with local leases send batch-sized checks, or none when their pool serves them.
    const plan = pools.take(remote, now);
    const sent = remoteCalls.outcome(plan === undefined ? remote : plan.send, now);
    const fromLocal = localCalls.outcome(local, now);
    if (!isPromise(fromLocal)) {
      if (!isPromise(sent)) return settle(request, plan, sent, fromLocal);
      // The usual remote case: one promise to wait on, no Promise.all.
      return sent.then((outcome) => settle(request, plan, outcome, fromLocal));
    }
    return Promise.all([sent, fromLocal]).then(([s, l]) => settle(request, plan, s, l));
  }

  /** The decision, and what it sets off: pool refunds, leases handed back or counted, the observer. */
  function settle(
    request: PlannedRequest,
    plan: LeasePlan | undefined,
    sent: StoreOutcome,
    localOutcome: StoreOutcome,
  ): Decision {
    const storeOutcome = plan === undefined ? sent : pools.settle(request.remote, plan, sent, request.now);
    const decision = decideRequest(request, storeOutcome, localOutcome);
    if (!decision.allowed && plan !== undefined) pools.refund(plan);
    // One store may have committed leases while the other denied: hand them back at once.
    if (!decision.allowed) {
      const held = heldLeases(request, storeOutcome, localOutcome);
      if (held.length > 0) void releaseLeases(held, request.now);
    } else {
      for (const lease of decision.leases) if (!lease.refund) observer.onLeases(lease.rule, 1);
    }
    observer.onDecision(decision, request.descriptors);
    return decision;
  }

  function setRules(rules: CompiledRules): void {
    assertListsGiven(rules, lists);
    table = rules;
    watched.rules(rules);
    observer.onRulesLoaded(rules);
  }
  const unsubscribe = source?.subscribe(
    (rules) => {
      // A reload naming a list this limiter was not given is refused like a broken file: the last table stays.
      try {
        setRules(rules);
      } catch (error) {
        observer.onRulesError(error as Error);
      }
    },
    (error) => observer.onRulesError(error),
  );
  observer.onRulesLoaded(table);

  function explainRule(
    rule: CompiledRule,
    descriptors: Descriptors,
    acted: ActionOutcome | undefined,
  ): ExplainedRule {
    const counts = rule.action === undefined;
    const tag = counts ? tagFor(rule, descriptors, secret) : undefined;
    const exemptedBy = acted?.exempted.get(rule.name);
    return {
      rule: rule.name,
      action: rule.action ?? 'limit',
      ...(exemptedBy === undefined ? {} : { exemptedBy }),
      algorithm: rule.algorithm,
      key: rule.key,
      tag,
      mode: rule.mode,
      effectiveMode: counts
        ? tag === undefined
          ? undefined
          : effectiveMode(rule, tag, dryRun)
        : dryRun
          ? 'shadow'
          : rule.mode,
      rollout: rule.rollout,
      scope: rule.scope,
    };
  }

  return {
    check(descriptors, opts) {
      try {
        const decision = decide(descriptors, opts);
        return isPromise(decision) ? decision : Promise.resolve(decision);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    decide,
    async release(decision) {
      if (released.has(decision) || decision.leases.length === 0) return;
      released.add(decision);
      await releaseLeases(
        decision.leases.filter((lease) => !lease.refund),
        clock(),
      );
    },
    async cancel(decision) {
      if (cancelled.has(decision) || decision.leases.length === 0) return;
      cancelled.add(decision);
      const wasReleased = released.has(decision);
      released.add(decision);
      await releaseLeases(
        decision.leases.filter((lease) => lease.refund || !wasReleased),
        clock(),
      );
    },
    explain(descriptors, opts = {}) {
      const rules = table;
      const matched: readonly CompiledRule[] = matchedRules(rules, descriptors, opts, clock(), lists);
      const acted =
        rules.actions === true || opts.rules?.actions === true ? resolveActions(matched, dryRun) : undefined;
      return {
        version: rules.version,
        rules: matched.map((rule) => explainRule(rule, descriptors, acted)),
        ...(acted?.decidedBy === undefined
          ? {}
          : { decidedBy: { rule: acted.decidedBy.name, action: acted.decidedBy.action ?? 'allow' } }),
      };
    },
    setRules,
    get rules() {
      return table;
    },
    get version() {
      return table.version;
    },
    health() {
      return limiterHealth(store, localStore, {
        pending: remoteCalls.pending,
        failingSince: remoteCalls.failingSince,
        observerFailures: observer.failures,
      });
    },
    async close() {
      unsubscribe?.();
      watched.close();
      await Promise.allSettled([store.close(), localStore.close()]);
    },
  };
}

/** Options of a check that gives none. */
const NO_OPTIONS: CheckOptions = Object.freeze({});
const NO_CHECKS: readonly PlannedCheck[] = Object.freeze([]);
const NO_RULES: readonly CompiledRule[] = Object.freeze([]);

/** The limiter's own rules and the check's extra (route) rules that apply to a request. */
function matchedRules(
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
function byScope(planned: readonly PlannedCheck[]): [readonly PlannedCheck[], readonly PlannedCheck[]] {
  let local = 0;
  for (const p of planned) if (p.rule.scope === 'local') local++;
  if (local === 0) return [planned, NO_CHECKS];
  if (local === planned.length) return [NO_CHECKS, planned];
  return [planned.filter((p) => p.rule.scope !== 'local'), planned.filter((p) => p.rule.scope === 'local')];
}

/** The rules option is a compiled table or a source of them; anything else is refused at once, not per request. */
function assertRules(rules: unknown): void {
  assertNotPromise(rules);
  if (isCompiledRules(rules) || isRulesSource(rules)) return;
  throw new ConfigError(
    'rules must be a compiled rule table (compileRules, resolveRules) or a rules source (watchRules, redisRules)',
  );
}

/** The `lists` option: a map of name -> list whose `current` set answers `has`; anything else is refused. */
function assertLists(lists: unknown): Lists | undefined {
  if (lists === undefined) return undefined;
  if (lists === null || typeof lists !== 'object' || Array.isArray(lists))
    throw new ConfigError('lists must be a map of list name -> list (fileList, redisList)');
  for (const [name, list] of Object.entries(lists)) {
    const current = (list as { current?: { has?: unknown } } | null)?.current;
    if (typeof current?.has !== 'function')
      throw new ConfigError(
        `lists.${name} is not a list: use fileList(path), redisList(...) or valueList([...])`,
      );
  }
  return lists as Lists;
}

/** Every list a table names must have been given: a typo would otherwise match nothing, silently. */
function assertListsGiven(rules: CompiledRules, lists: Lists | undefined): void {
  const missing = (rules.lists ?? []).filter((name) => lists === undefined || !Object.hasOwn(lists, name));
  if (missing.length === 0) return;
  const given = lists === undefined ? 'none was given' : `given: ${Object.keys(lists).join(', ') || 'none'}`;
  throw new ConfigError(
    `the rules name the list${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which the limiter was not given (lists option; ${given})`,
  );
}

/** The `silence` option as a set; an unknown code is refused, so a typo does not silently keep a notice on. */
function silenced(options: LimiterOptions): ReadonlySet<string> {
  const codes = options.silence ?? [];
  if (!Array.isArray(codes)) throw new ConfigError('silence must be a list of notice codes');
  for (const code of codes) {
    if (!Object.hasOwn(LIMITER_NOTICES, code))
      throw new ConfigError(
        `silence: unknown notice code ${JSON.stringify(code)}; the codes are ${Object.keys(LIMITER_NOTICES).join(', ')}`,
      );
  }
  return new Set(codes);
}

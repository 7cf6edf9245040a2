import { assertCost } from './cost.js';
import { buildDecision, ruleResult, type StoreOutcome } from './decision.js';
import { ConfigError, StoreError } from './errors.js';
import { TagCache, tagFor } from './keys.js';
import { type LeasePlan, LocalLeases } from './localLeases.js';
import { effectiveMode, type PlannedCheck, planChecks } from './plan.js';
import { MemoryStore } from './stores/memory.js';
import type {
  Check,
  CheckResult,
  CompiledRule,
  CompiledRules,
  Decision,
  Descriptors,
  Lease,
  Mode,
  Observer,
  RuleResult,
  RuleScope,
  RulesSource,
  Store,
  StoreErrorKind,
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
}

/** The engine: matches rules, evaluates them in one store call per store, decides. */
export interface Limiter {
  /** Decides one request. Never rejects because of the store; rejects only on an invalid `cost`. */
  check(descriptors: Descriptors, options?: CheckOptions): Promise<Decision>;
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
  /** Closes both stores. */
  close(): Promise<void>;
}

function assertStore(store: unknown, name: string): asserts store is Store {
  const s = store as Partial<Store> | null;
  for (const method of ['evaluate', 'release', 'close'] as const) {
    if (typeof s?.[method] !== 'function') throw new ConfigError(`${name} must have a ${method}() method`);
  }
}

function errorKind(error: unknown): StoreErrorKind {
  if (error instanceof StoreError) {
    if (error.code === 'ERR_SLUICE_STORE_TIMEOUT') return 'timeout';
    if (error.code === 'ERR_SLUICE_BREAKER_OPEN') return 'breaker_open';
  }
  return 'error';
}

/** Rejects with ERR_SLUICE_STORE_TIMEOUT after `ms`; one promise and one unref'd timer per call. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreError('ERR_SLUICE_STORE_TIMEOUT', `store call over ${ms} ms`)),
      ms,
    );
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Creates a limiter. */
export function createLimiter(options: LimiterOptions): Limiter {
  const store = options.store ?? new MemoryStore();
  const localStore = options.localStore ?? new MemoryStore();
  assertStore(store, 'store');
  assertStore(localStore, 'localStore');
  const clock = options.clock ?? Date.now;
  const observer = options.observer ?? {};
  const timeoutMs = options.timeoutMs ?? 1000;
  const secret = options.keySecret;
  const source = isRulesSource(options.rules) ? options.rules : undefined;
  let table = source ? source.current : (options.rules as CompiledRules);
  const tags = new TagCache(secret);
  const pools = new LocalLeases();
  const released = new WeakSet<Decision>();
  const cancelled = new WeakSet<Decision>();

  function notify<K extends keyof Observer>(hook: K, ...args: Parameters<NonNullable<Observer[K]>>): void {
    try {
      (observer[hook] as ((...a: typeof args) => void) | undefined)?.(...args);
    } catch {
      // An observer bug must not reach the request path.
    }
  }

  /** A call to a remote (or custom) store, under the backstop timeout; failures become an outcome. */
  function evaluateOn(target: Store, checks: Check[], now: number): Promise<StoreOutcome> {
    const started = performance.now();
    let call: Promise<CheckResult[]>;
    try {
      call = target.evaluate(checks, now);
    } catch (error) {
      return Promise.resolve(failed(error));
    }
    return withTimeout(call, timeoutMs).then((results): StoreOutcome => {
      notify('onStoreLatency', (performance.now() - started) / 1000);
      return { ok: true, results };
    }, failed);
  }

  function matchedRules(rules: CompiledRules, descriptors: Descriptors, opts: CheckOptions, now: number) {
    const own = opts.global === false ? [] : rules.match(descriptors, now);
    const extra = opts.rules ? opts.rules.match(descriptors, now) : [];
    return extra.length === 0 ? own : [...own, ...extra];
  }

  function leasesOf(
    planned: readonly PlannedCheck[],
    outcome: StoreOutcome,
    scope: RuleScope,
  ): readonly Lease[] {
    if (!outcome.ok) return NO_LEASES;
    const leases: Lease[] = [];
    for (let i = 0; i < planned.length; i++) {
      const { check } = planned[i]!;
      const result = outcome.results[i];
      // Nothing was committed when an enforcing check denied.
      if (!result?.allowed && check.mode === 'enforce') return NO_LEASES;
      if (!result?.allowed) continue;
      const { rule, tag } = check;
      if (check.leaseId !== undefined) leases.push({ rule, tag, id: check.leaseId, scope });
      // A queued leaky_bucket request holds its place until served; if it never is, the place goes back.
      else if ((result.delayMs ?? 0) > 0) {
        leases.push({ rule, tag, id: '', scope, refund: { cost: check.cost, params: check.params } });
      }
    }
    return leases.length === 0 ? NO_LEASES : leases;
  }

  async function releaseLeases(leases: readonly Lease[], now: number): Promise<void> {
    const byScope = (scope: RuleScope) => leases.filter((l) => l.scope === scope);
    const calls = [byScope('store'), byScope('local')].map((group, i) =>
      group.length === 0 ? undefined : (i === 0 ? store : localStore).release(group, now),
    );
    await Promise.allSettled(calls);
    for (const lease of leases) if (!lease.refund) notify('onLeases', lease.rule, -1);
  }

  /**
   * The store call of one scope. An in-process MemoryStore answers synchronously (no promise, no timer);
   * a scope with no checks makes no call.
   */
  function outcomeOf(target: Store, planned: readonly PlannedCheck[], now: number): Maybe<StoreOutcome> {
    if (planned.length === 0) return NOTHING_DONE;
    const checks: Check[] = new Array(planned.length);
    for (let i = 0; i < planned.length; i++) checks[i] = planned[i]!.check;
    if (!(target instanceof MemoryStore)) return evaluateOn(target, checks, now);
    try {
      return { ok: true, results: target.evaluateNow(checks, now) };
    } catch (error) {
      return failed(error);
    }
  }

  function failed(error: unknown): StoreOutcome {
    const kind = errorKind(error);
    notify('onStoreError', kind, error instanceof Error ? error : new Error(String(error)));
    return { ok: false, kind };
  }

  function remoteOutcome(remote: readonly PlannedCheck[], now: number): Maybe<RemoteOutcome> {
    const plan = pools.take(remote, now);
    if (plan === undefined) return then(outcomeOf(store, remote, now), (outcome) => ({ outcome, plan }));
    return then(outcomeOf(store, plan.send, now), (sent) => ({
      outcome: pools.settle(remote, plan, sent, now),
      plan,
    }));
  }

  /** Decides one request; synchronous up to the store calls, which are awaited only when they are remote. */
  function check(descriptors: Descriptors, opts: CheckOptions = NO_OPTIONS): Promise<Decision> {
    let codeCost: number;
    try {
      codeCost = opts.cost === undefined ? 1 : assertCost(opts.cost);
    } catch (error) {
      return Promise.reject(error);
    }
    const rules = table;
    const now = clock();
    const planned = planChecks(matchedRules(rules, descriptors, opts, now), descriptors, codeCost, tags);
    const [remote, local] = byScope(planned);
    const request: Request = { descriptors, version: rules.version, now, remote, local };
    const fromStore = remoteOutcome(remote, now);
    const fromLocal = outcomeOf(localStore, local, now);
    if (!isPromise(fromStore) && !isPromise(fromLocal)) {
      return Promise.resolve(decide(request, fromStore, fromLocal));
    }
    return Promise.all([fromStore, fromLocal]).then(([s, l]) => decide(request, s, l));
  }

  function decide(request: Request, fromStore: RemoteOutcome, localOutcome: StoreOutcome): Decision {
    const { remote, local, now } = request;
    const { outcome: storeOutcome, plan } = fromStore;
    const results: RuleResult[] = [];
    let delayMs = 0;
    for (const [group, outcome] of [
      [remote, storeOutcome],
      [local, localOutcome],
    ] as const) {
      for (let i = 0; i < group.length; i++) {
        results.push(ruleResult(group[i]!, outcome, i));
        if (outcome.ok) delayMs = Math.max(delayMs, outcome.results[i]?.delayMs ?? 0);
      }
    }
    const remoteLeases = leasesOf(remote, storeOutcome, 'store');
    const localLeases = leasesOf(local, localOutcome, 'local');
    const leases =
      localLeases.length === 0
        ? remoteLeases
        : remoteLeases.length === 0
          ? localLeases
          : [...remoteLeases, ...localLeases];
    const decision = buildDecision({
      results,
      delayMs,
      leases,
      failure: failureOf(storeOutcome) ?? failureOf(localOutcome),
      version: request.version,
    });
    if (!decision.allowed && plan !== undefined) pools.refund(plan);
    // One store may have committed leases while the other denied: hand them back at once.
    if (!decision.allowed && leases.length > 0) void releaseLeases(leases, now);
    else for (const lease of decision.leases) if (!lease.refund) notify('onLeases', lease.rule, 1);
    notify('onDecision', decision, request.descriptors);
    return decision;
  }

  function setRules(rules: CompiledRules): void {
    table = rules;
    notify('onRulesLoaded', rules);
  }
  const unsubscribe = source?.subscribe(setRules, (error) => notify('onRulesError', error));
  notify('onRulesLoaded', table);

  return {
    check,
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
      const matched: readonly CompiledRule[] = matchedRules(rules, descriptors, opts, clock());
      return {
        version: rules.version,
        rules: matched.map((rule) => {
          const tag = tagFor(rule, descriptors, secret);
          return {
            rule: rule.name,
            algorithm: rule.algorithm,
            key: rule.key,
            tag,
            mode: rule.mode,
            effectiveMode: tag === undefined ? undefined : effectiveMode(rule, tag),
            rollout: rule.rollout,
            scope: rule.scope,
          };
        }),
      };
    },
    setRules,
    get rules() {
      return table;
    },
    get version() {
      return table.version;
    },
    async close() {
      unsubscribe?.();
      await Promise.allSettled([store.close(), localStore.close()]);
    },
  };
}

/** Options of a check that gives none. */
const NO_OPTIONS: CheckOptions = Object.freeze({});
const NO_LEASES: readonly Lease[] = Object.freeze([]);
const NO_CHECKS: readonly PlannedCheck[] = Object.freeze([]);
/** The outcome of a store call with nothing to evaluate. */
const NOTHING_DONE: StoreOutcome = Object.freeze({ ok: true, results: Object.freeze([]) }) as StoreOutcome;

type Maybe<T> = T | Promise<T>;

function isPromise<T>(value: Maybe<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** `next(value)`, at once when the value is there, after it resolves when it is a promise. */
function then<T, U>(value: Maybe<T>, next: (value: T) => U): Maybe<U> {
  return isPromise(value) ? value.then(next) : next(value);
}

/** What one check is deciding, handed from the planning half to the deciding half. */
interface Request {
  readonly descriptors: Descriptors;
  readonly version: string;
  readonly now: number;
  readonly remote: readonly PlannedCheck[];
  readonly local: readonly PlannedCheck[];
}

/** The store-side outcome of a request, and what local leases did in it. */
interface RemoteOutcome {
  readonly outcome: StoreOutcome;
  readonly plan: LeasePlan | undefined;
}

/** Splits checks by where they count: [the limiter's store, the local store]. Usually all go to the store. */
function byScope(planned: readonly PlannedCheck[]): [readonly PlannedCheck[], readonly PlannedCheck[]] {
  let local = 0;
  for (const p of planned) if (p.rule.scope === 'local') local++;
  if (local === 0) return [planned, NO_CHECKS];
  if (local === planned.length) return [NO_CHECKS, planned];
  return [planned.filter((p) => p.rule.scope !== 'local'), planned.filter((p) => p.rule.scope === 'local')];
}

function isRulesSource(rules: CompiledRules | RulesSource): rules is RulesSource {
  return typeof (rules as Partial<RulesSource>).subscribe === 'function';
}

function failureOf(outcome: StoreOutcome): StoreErrorKind | undefined {
  if (!outcome.ok) return outcome.kind;
  return outcome.results.find((r) => r.degraded !== undefined)?.degraded;
}

import { AdaptiveControl, factorsOf } from '../adaptive/controller.js';
import { ConfigError } from '../base/errors.js';
import { isPromise } from '../base/maybe.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { Lists } from '../lists/contract.js';
import type { Decision, Observer } from '../observe/contract.js';
import { guardObserver } from '../observe/guarded.js';
import { type LimiterHealth, limiterHealth } from '../observe/health.js';
import { LIMITER_NOTICES, type LimiterNotice, misuseWatch, type NoticeLogger } from '../observe/misuse.js';
import { RegionalBudgets, type RegionsOptions, regionSettings } from '../regions/index.js';
import { withResilience } from '../resilience/resilientStore.js';
import type { CompiledRules, Descriptors, RulesSource } from '../rules/contract.js';
import { assertNotPromise, isCompiledRules, isRulesSource } from '../rules/resolve.js';
import type { BreakerState, Lease, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { TagCache } from '../store/tags.js';
import type { GatewayBoard } from '../watch/board.js';
import { limiterWatch } from '../watch/limiterWatch.js';
import type { WatchOptions } from '../watch/options.js';
import { type CheckManyOptions, type CheckSet, decideMany } from './checkMany.js';
import { type Explanation, explainRequest } from './explain.js';
import { LeaseKeeper, renewRound } from './leaseKeeper.js';
import { LocalLeases } from './localLeases.js';
import type { RequestPath } from './pathParts.js';
import { type CheckOptions, decideOne, LeaseLedger, NO_OPTIONS, releaseLeases } from './requestPath.js';
import { type ActualCosts, type Settlement, Settlements } from './settle.js';
import { steadyClock } from './steadyClock.js';
import { StoreCaller } from './storeCall.js';
import { unbanKey } from './unban.js';

export type { CheckManyOptions, CheckSet } from './checkMany.js';
export type { ExplainedRule, Explanation } from './explain.js';
export type { CheckOptions } from './requestPath.js';
export type { ActualCosts, Settlement, SettleOutcome } from './settle.js';

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** The compiled rule table (see `resolveRules` for paths and plain objects), or a source that reloads it. */
  rules: CompiledRules | RulesSource;
  /** Where counters live; default: a MemoryStore. */
  store?: Store;
  /** Counters of `scope: local` rules; default: a MemoryStore of this process. */
  localStore?: Store;
  /**
   * Milliseconds since the epoch; default `Date.now` that never steps back (see steadyClock.ts), whatever the
   * store. An injected clock is used as given.
   */
  clock?: () => number;
  observer?: Observer;
  /**
   * Time limit of each call to a store that neither answers in process nor bounds its own calls (a store of
   * yours: the engine puts core's `resilientStore` around it), in ms; default 1000. RedisStore keeps its own.
   */
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
  /**
   * This gateway's region and the store every region shares: `scope: global` rules then count in `store` (the
   * region's own) against the region's grant of one global budget, drawn in slices off the request path
   * (docs/guide/regions.md). Without it, a global rule counts in `store` like any other.
   */
  regions?: RegionsOptions;
  /**
   * Heavy hitters per rule (`limiter.hotKeys()`): the top keys by requests and by denials in fixed memory, by
   * hashed counter tag; with `{publish: true}` also published to the store's board every few seconds for
   * `sluice top` and `sluice dashboard` (docs/guide/watching.md). Default on, not published; `false`: off.
   */
  watch?: WatchOptions | false;
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
  /**
   * Several descriptor sets as one request (an Envoy call's descriptors): one rule table, one call per store,
   * all or nothing. One decision per set (its own rules' answer); counted only when every one is allowed.
   * Rejects only on an invalid `cost`.
   */
  checkMany(sets: readonly CheckSet[], options?: CheckManyOptions): Promise<Decision[]>;
  /**
   * When a decision's response ends: releases its concurrency leases and, given the response's `status`,
   * refunds the charges of its `count` rules that do not count that status (no status: the client left
   * first, and the charges stay). Once per decision; idempotent; never rejects.
   */
  release(decision: Decision, status?: number): Promise<void>;
  /**
   * For a request given up before it was served (the client left while it waited): releases its leases and
   * gives its leaky_bucket places back. Idempotent; never rejects.
   */
  cancel(decision: Decision): Promise<void>;
  /**
   * Reserve and settle: charges or gives back, for each of the decision's rules with `settle`, the difference
   * between its actual cost (one number, or per rule name) and the estimate charged at admission; at most once
   * per decision, in one store call per store. Never rejects: bad input answers a `Settlement` saying so.
   */
  settle(decision: Decision, actual: ActualCosts): Promise<Settlement>;
  /**
   * Keeps the decision's concurrency leases renewed while its response or socket stays open (a stream, a
   * WebSocket), until `release` or `cancel`: one renewal round for all held leases every third of the
   * shortest lease, one store call per store (engine/leaseKeeper.ts). The HTTP layer calls it for every
   * response that holds a lease; call it yourself only with a `release` sure to follow.
   */
  hold(decision: Decision): void;
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
  /**
   * An application's circuit breaker (opossum or any) drives the adaptive rule `rule`: `open` sets its factor
   * to the floor, `half_open` midway to 1, `closed` lets AIMD go on from there; shared through the store.
   */
  setBreaker(rule: string, state: BreakerState): void;
  /** Reports the response of a request whose decision lists `adaptive` rules: its status and latency. */
  observe(decision: Decision, status: number, latencyMs: number): void;
  /** An adaptive rule's factor now: 1 at full health, down to its floor. */
  factor(rule: string): number;
  /**
   * Lifts the ban of the key these descriptors make under a rule with `ban` (see unban.ts): logged, reported
   * to the observer (`onUnban`); true when the key had one.
   */
  unban(rule: string, descriptors: Descriptors): Promise<boolean>;
  /**
   * This process's board: per rule its heaviest keys (hashed tags) by requests and by denials, counts and
   * rates, and the store's health, as it publishes it (watch/board.ts); undefined with `watch: false`.
   */
  hotKeys(): GatewayBoard | undefined;
  /** Closes the stores it made; a store passed in stays open (it is the app's, as a Redis client is). */
  close(): Promise<void>;
}

const LIMITER_OPTIONS: readonly (keyof LimiterOptions)[] = [
  'rules',
  'store',
  'localStore',
  'clock',
  'observer',
  'timeoutMs',
  'keySecret',
  'dryRun',
  'logger',
  'silence',
  'lists',
  'regions',
  'watch',
];

function assertStore(store: unknown, name: string): asserts store is Store {
  const s = store as Partial<Store> | null;
  for (const method of ['evaluate', 'release', 'close'] as const) {
    if (typeof s?.[method] !== 'function') throw new ConfigError(`${name} must have a ${method}() method`);
  }
}

/** Creates a limiter. */
export function createLimiter(options: LimiterOptions): Limiter {
  checkOptionNames('createLimiter', options, LIMITER_OPTIONS);
  const given = { store: options.store ?? new MemoryStore(), local: options.localStore ?? new MemoryStore() };
  assertStore(given.store, 'store');
  assertStore(given.local, 'localStore');
  // Never back, whatever the store: a shared store's counters were written on this clock too, and a stepped-back
  // one would read them as far ahead, that is as stale, and open a second window (README, Time and numbers).
  const clock = options.clock ?? steadyClock();
  const guarded = guardObserver(options.observer);
  const watch = limiterWatch(options.watch, {
    store: given.store,
    observer: guarded,
    clock,
    health: () => health(),
  });
  const observer = watch?.observer ?? guarded;
  const logger = options.logger ?? console;
  assertRules(options.rules);
  const lists = assertLists(options.lists);
  const source = isRulesSource(options.rules) ? options.rules : undefined;
  const table = source ? source.current : (options.rules as CompiledRules);
  assertListsGiven(table, lists);
  const stores = guardedStores(given, options.timeoutMs ?? 1000, logger);
  const calls = {
    store: new StoreCaller(stores.store, observer, clock),
    local: new StoreCaller(stores.local, observer, clock),
  };
  const adaptive = new AdaptiveControl({
    factors: factorsOf(given.store),
    observer,
    domain: () => path.table.domain,
  });
  const regions =
    options.regions === undefined
      ? undefined
      : new RegionalBudgets(regionSettings(options.regions), { clock, observer, logger });
  const path: RequestPath = {
    table,
    lists,
    dryRun: options.dryRun === true,
    tags: new TagCache(options.keySecret),
    pools: new LocalLeases(),
    calls,
    stores,
    observer,
    clock,
    adaptive,
    ...(regions === undefined ? {} : { regions }),
    ...(watch === undefined ? {} : { watch: watch.hotKeys }),
  };
  const ledger = new LeaseLedger();
  const settlements = new Settlements();
  const keeper = new LeaseKeeper(renewRound({ stores, observer, clock }), {
    onHeld: observer.onHeld,
    observer,
    logger,
  });
  const watched = misuseWatch.watch(
    { store: given.store, localStore: given.local },
    table,
    logger,
    silenced(options),
  );
  const explained = { secret: options.keySecret, dryRun: path.dryRun, lists, regions };

  function setRules(rules: CompiledRules): void {
    assertListsGiven(rules, lists);
    path.table = rules;
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

  const decide = (descriptors: Descriptors, opts?: CheckOptions) => {
    watched.checked();
    return decideOne(path, descriptors, opts);
  };
  // The stores' own reports: a wrapper's would say "connected" while the engine sees its calls fail.
  const health = () =>
    limiterHealth(given.store, given.local, {
      pending: calls.store.pending,
      failingSince: calls.store.failingSince,
      observerFailures: observer.failures,
    });
  const giveBack = (leases: readonly Lease[]) =>
    leases.length === 0 ? Promise.resolve() : releaseLeases(path, leases, clock());
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
    checkMany(sets, opts) {
      try {
        watched.checked();
        return Promise.resolve(decideMany(path, sets, opts));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    release: (decision, status) => {
      keeper.drop(decision);
      return giveBack(ledger.toRelease(decision, status));
    },
    cancel: (decision) => {
      keeper.drop(decision);
      settlements.close(decision);
      return giveBack(ledger.toCancel(decision));
    },
    hold: (decision) => keeper.hold(decision),
    settle(decision, actual) {
      const now = clock();
      const { settlement, leases } = settlements.plan(decision, actual, now);
      if (leases.length === 0) return Promise.resolve(settlement);
      return releaseLeases(path, leases, now).then(() => settlement);
    },
    explain: (descriptors, opts = NO_OPTIONS) =>
      explainRequest(path.table, descriptors, opts, clock(), explained),
    setRules,
    get rules() {
      return path.table;
    },
    get version() {
      return path.table.version;
    },
    health,
    setBreaker(rule, state) {
      adaptive.setBreakerOf(path.table, rule, state, clock());
    },
    observe(decision, status, latencyMs) {
      if (decision.adaptive !== undefined) adaptive.observe(decision.adaptive, status, latencyMs, clock());
    },
    factor: (rule) => adaptive.factorOf(rule),
    unban: (rule, descriptors) =>
      unbanKey(
        { rules: path.table, stores: given, secret: options.keySecret, logger, onUnban: observer.onUnban },
        rule,
        descriptors,
      ),
    hotKeys: () => watch?.view(),
    async close() {
      regions?.close();
      watch?.stop();
      unsubscribe?.();
      watched.close();
      keeper.stop();
      // Only the stores this limiter made: a store the app passed is the app's, and may still serve another
      // limiter (an app rebuilt on it, a second app), which would otherwise admit everything unlimited.
      const made: { close(): Promise<void> }[] = [];
      if (options.store === undefined) made.push(stores.store);
      if (options.localStore === undefined) made.push(stores.local);
      await Promise.allSettled(made.map((store) => store.close()));
    },
  };
}

/**
 * The stores as the engine calls them: a store that answers in process, or bounds its own calls, as it is;
 * any other under core's resilience wrapper with the `timeoutMs` backstop (no breaker and no bound on
 * pending calls: what the store does not ask for, the engine does not add).
 */
function guardedStores(
  given: { readonly store: Store; readonly local: Store },
  timeoutMs: number,
  logger: NoticeLogger,
): { readonly store: Store; readonly local: Store } {
  const options = { timeoutMs, breaker: false, maxPending: false, logger } as const;
  return { store: withResilience(given.store, options), local: withResilience(given.local, options) };
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

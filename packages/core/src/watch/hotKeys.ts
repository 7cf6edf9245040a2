import type { RuleResult } from '../observe/contract.js';
import type { LimiterHealth } from '../observe/health.js';
import type { CompiledRules, Descriptors } from '../rules/contract.js';
import type { Check, PlannedCheck } from '../store/contract.js';
import { BOARD_FORMAT, type BoardStoreHealth, type GatewayBoard } from './board.js';
import type { WatchSettings } from './options.js';
import { MAX_ROUTES, outcomeOf, RuleWatch, ruleVersion } from './ruleWatch.js';

/** Rules watched at most (the table's and route-level ones): a bound against rule names made per request. */
const MAX_RULES = 1000;
/** Route text kept at most, in characters. */
const MAX_ROUTE_TEXT = 120;

/** Requests noted before they are counted in the sketches, at most. */
const BATCH = 256;

/**
 * Requests noted as they are decided (a rule, a tag, an outcome, a route: four array stores) and counted into
 * the sketches a batch at a time: the sketches' memory stays in cache through a batch instead of being pushed out
 * by the rest of each request's work, which made each count about twice as dear.
 */
class Pending {
  readonly rules: (RuleWatch | undefined)[] = new Array(BATCH).fill(undefined);
  readonly tags: string[] = new Array(BATCH).fill('');
  readonly outcomes = new Uint8Array(BATCH);
  readonly routes = new Int16Array(BATCH);
  size = 0;

  /** Counts every noted request into its rule's watch. */
  flush(): void {
    const { rules, tags, outcomes, routes, size } = this;
    for (let i = 0; i < size; i++) {
      rules[i]!.saw(tags[i]!, outcomes[i]!, routes[i]!);
      rules[i] = undefined;
    }
    this.size = 0;
  }
}

/** The store's calls over the current interval, as the limiter timed them. */
class StoreTimes {
  calls = 0;
  totalMs = 0;
  maxMs = 0;
  errors = 0;

  reset(): void {
    this.calls = 0;
    this.totalMs = 0;
    this.maxMs = 0;
    this.errors = 0;
  }
}

/**
 * A limiter's heavy hitters and counts, per rule, fed by the engine with each decision's checks (their tags,
 * hashed: never a raw value) and results, synchronously and with no store call. `view` answers the board;
 * `tick` also ends the interval (the publisher's), and the window once it is `windowMs` old.
 */
export class HotKeys {
  readonly #settings: WatchSettings;
  readonly #rules = new Map<string, RuleWatch>();
  /** Route -> index in every rule's route counts; at most MAX_ROUTES, then `(other)`. */
  readonly #routes = new Map<string, number>();
  readonly #routeNames: string[] = [];
  readonly #times = new StoreTimes();
  readonly #pending = new Pending();
  #table: CompiledRules | undefined;
  #since: number;
  #lastTick: number;

  constructor(settings: WatchSettings, now: number) {
    this.#settings = settings;
    this.#since = now;
    this.#lastTick = now;
  }

  /** A decision of the lean path: `results[i]` is the answer to `checks[i]`. */
  sawChecks(checks: readonly Check[], results: readonly RuleResult[], descriptors: Descriptors): void {
    const route = this.#routeOf(descriptors);
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const result = results[i];
      if (result !== undefined && result.rule === check.rule)
        this.#note(check.rule, check.tag, result, route);
    }
  }

  /** A decision of the general path: the store's checks first, then the local ones, then results of no check. */
  sawPlanned(
    remote: readonly PlannedCheck[],
    local: readonly PlannedCheck[],
    results: readonly RuleResult[],
    descriptors: Descriptors,
  ): void {
    if (remote.length + local.length === 0) return;
    const route = this.#routeOf(descriptors);
    this.#sawSome(remote, results, 0, route);
    this.#sawSome(local, results, remote.length, route);
  }

  /** A remote store call's time (the limiter times them only while something listens). */
  storeLatency(seconds: number): void {
    const ms = seconds * 1000;
    const times = this.#times;
    times.calls++;
    times.totalMs += ms;
    if (ms > times.maxMs) times.maxMs = ms;
  }

  storeError(): void {
    this.#times.errors++;
  }

  /** A new rule table: each rule's version and mode; rules gone from it are dropped at the next tick. */
  rulesLoaded(rules: CompiledRules): void {
    this.#table = rules;
    for (const rule of rules.rules) {
      if (rule.action !== undefined) continue;
      const watch = this.#rule(rule.name);
      if (watch === undefined) continue;
      watch.version = ruleVersion(rule);
      watch.mode = rule.mode;
    }
  }

  /** The board now, rates over the current interval; changes nothing. */
  view(now: number, health: LimiterHealth): GatewayBoard {
    this.#pending.flush();
    const seconds = (now - this.#lastTick) / 1000;
    const table = this.#table;
    const rules = [...this.#rules.values()].map((rule) => rule.view(seconds, this.#routeNames));
    return {
      format: BOARD_FORMAT,
      gateway: this.#settings.gateway,
      domain: table?.domain ?? '',
      version: table?.version ?? '',
      at: now,
      since: this.#since,
      intervalMs: now - this.#lastTick,
      store: this.#storeView(health),
      rules,
    };
  }

  /** The board now, and the interval ends (and the window, once old enough): what a publisher sends. */
  tick(now: number, health: LimiterHealth): GatewayBoard {
    const board = this.view(now, health);
    const names = new Set(this.#table?.rules.map((rule) => rule.name));
    for (const [name, rule] of this.#rules) {
      // Route-level rules are not in the table; a rule gone from it with nothing counted goes.
      if (!names.has(name) && rule.requests === 0) this.#rules.delete(name);
    }
    if (now - this.#since >= this.#settings.windowMs) {
      for (const rule of this.#rules.values()) rule.clear();
      this.#since = now;
    } else for (const rule of this.#rules.values()) rule.rebase();
    this.#times.reset();
    this.#lastTick = now;
    return board;
  }

  #sawSome(
    planned: readonly PlannedCheck[],
    results: readonly RuleResult[],
    offset: number,
    route: number,
  ): void {
    for (let i = 0; i < planned.length; i++) {
      const { rule, check } = planned[i]!;
      const result = results[offset + i];
      if (result === undefined || result.rule !== check.rule) continue;
      // A sharded rule's check counts on one of its sub-counters (`<tag>-<n>`): the key is the tag before it.
      const tag = (rule.shards ?? 1) > 1 ? check.tag.slice(0, check.tag.lastIndexOf('-')) : check.tag;
      this.#note(check.rule, tag, result, route);
    }
  }

  /** Notes one rule's result for the next batch; counts the batch when it is full. */
  #note(rule: string, tag: string, result: RuleResult, route: number): void {
    const watch = this.#rule(rule);
    if (watch === undefined) return;
    const pending = this.#pending;
    const at = pending.size;
    pending.rules[at] = watch;
    pending.tags[at] = tag;
    pending.outcomes[at] = outcomeOf(result);
    pending.routes[at] = route;
    pending.size = at + 1;
    if (at + 1 === BATCH) pending.flush();
  }

  #rule(name: string): RuleWatch | undefined {
    const found = this.#rules.get(name);
    if (found !== undefined || this.#rules.size >= MAX_RULES) return found;
    const made = new RuleWatch(name, this.#settings.keys);
    this.#rules.set(name, made);
    return made;
  }

  /** The request's route index in the route table; -1 when routes are not watched. */
  #routeOf(descriptors: Descriptors): number {
    if (!this.#settings.routes) return -1;
    // A request without one (no rule reads `route`, so the adapter did not build it) counts for every route.
    const route = descriptors.route ?? '(any route)';
    const index = this.#routes.get(route);
    if (index !== undefined) return index;
    if (this.#routeNames.length >= MAX_ROUTES) return MAX_ROUTES;
    const made = this.#routeNames.length;
    this.#routeNames.push(route.length > MAX_ROUTE_TEXT ? `${route.slice(0, MAX_ROUTE_TEXT - 1)}…` : route);
    this.#routes.set(route, made);
    return made;
  }

  #storeView(health: LimiterHealth): BoardStoreHealth {
    const { calls, totalMs, maxMs, errors } = this.#times;
    const round = (ms: number) => Math.round(ms * 1000) / 1000;
    return {
      connected: health.connected,
      breaker: health.breaker,
      failingOpenSince: health.failingOpenSince ?? null,
      calls,
      meanMs: calls === 0 ? null : round(totalMs / calls),
      maxMs: calls === 0 ? null : round(maxMs),
      errors,
    };
  }
}

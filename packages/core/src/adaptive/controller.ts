import { descriptorOf } from '../algorithms/index.js';
import type { LimitParams } from '../algorithms/limits.js';
import { ConfigError, StoreError } from '../base/errors.js';
import { isThenable } from '../base/maybe.js';
import type { Decision } from '../observe/contract.js';
import { withTimeout } from '../resilience/timeout.js';
import type { AdaptivePolicy, PriorityClass } from '../rules/adaptiveTypes.js';
import type { CompiledRule, CompiledRules, Descriptors } from '../rules/contract.js';
import type { BreakerState, FactorReport, FactorStore, PlannedCheck, Store } from '../store/contract.js';
import { clampFactor } from '../store/factors.js';
import { MemoryFactors } from '../store/memoryFactors.js';
import { classOf, scaledParams, shareOf } from './priority.js';

/** A gateway reports each adaptive rule's outcomes at most this often (and at least twice an interval). */
export const REPORT_EVERY_MS = 250;

/** A report not answered within this long is given up (its counts lost, the last factor kept). */
export const REPORT_TIMEOUT_MS = 1_000;

/** What the controller tells observers; both optional. */
export interface AdaptiveObserver {
  onAdaptiveFactor(rule: string, factor: number): void;
  onShed(rule: string, priority: PriorityClass): void;
}

/** Options of {@link AdaptiveControl}. */
export interface AdaptiveControlOptions {
  /** Where factors are shared: the limiter's store when it has the capability, else this process. */
  readonly factors: FactorStore;
  readonly observer: AdaptiveObserver;
  /** The rule table's domain now, so two domains' rules of one name keep two factors. */
  readonly domain: () => string;
}

/** One adaptive rule as this gateway sees it. */
interface RuleState {
  readonly name: string;
  policy: AdaptivePolicy;
  /** The fleet's factor at the last report. */
  factor: number;
  /** A circuit breaker's factor, while it is open or half open. */
  pin: number | undefined;
  requests: number;
  errors: number;
  slow: number;
  lastReport: number;
  reporting: boolean;
}

/** The factor a breaker state sets: open the floor, half open midway to 1, closed none (AIMD goes on). */
export function breakerFactor(state: BreakerState, policy: AdaptivePolicy): number | undefined {
  if (state === 'open') return policy.floor;
  if (state === 'half_open') return (policy.floor + 1) / 2;
  return undefined;
}

/** Where a limiter shares factors: its store when the store can, else this process. */
export function factorsOf(store: Store): FactorStore {
  const { adaptFactor } = store;
  if (typeof adaptFactor !== 'function') return new MemoryFactors();
  return { adaptFactor: (report, now) => adaptFactor.call(store, report, now) };
}

const BREAKER_STATES: ReadonlySet<string> = new Set<BreakerState>(['open', 'half_open', 'closed']);

/** The factor a rule's limit is scaled by now: a breaker's while it holds one, else the fleet's. */
function effective(state: RuleState): number {
  return state.pin ?? state.factor;
}

/** How often a gateway reports a rule: every REPORT_EVERY_MS, or twice an interval when that is shorter. */
export function reportEveryMs(policy: AdaptivePolicy): number {
  return Math.min(REPORT_EVERY_MS, policy.intervalMs / 2);
}

/**
 * A limiter's adaptive limits and priority shedding. Scales the params of rules with `adaptive` or `priority`
 * (others never reach it), gathers the outcomes of the responses those rules let through, and reports them to
 * the shared factor a few times a second per rule, never per request.
 */
export class AdaptiveControl {
  readonly #factors: FactorStore;
  readonly #observer: AdaptiveObserver;
  readonly #domain: () => string;
  readonly #states = new Map<string, RuleState>();
  /** Rules with a priority, by name, to tell a shed's class. */
  readonly #prioritized = new Map<string, CompiledRule>();

  constructor(options: AdaptiveControlOptions) {
    this.#factors = options.factors;
    this.#observer = options.observer;
    this.#domain = options.domain;
  }

  /** True once a rule with `adaptive` or `priority` was checked: only then do decisions need a look. */
  get active(): boolean {
    return this.#states.size > 0 || this.#prioritized.size > 0;
  }

  /**
   * The planned checks with the limits of adaptive and priority rules scaled for this request; the others
   * as they are. Called only for tables that have such rules.
   */
  scale(planned: PlannedCheck[], descriptors: Descriptors, now: number): PlannedCheck[] {
    for (let i = 0; i < planned.length; i++) {
      const { rule, check } = planned[i] as PlannedCheck;
      if (rule.adaptive === undefined && rule.priority === undefined) continue;
      const params = this.paramsFor(rule, check.params, descriptors, now);
      if (params !== check.params) planned[i] = { rule, check: { ...check, params } };
    }
    return planned;
  }

  /** A rule's params for this request: scaled by its factor and the request's priority class. */
  paramsFor(rule: CompiledRule, params: LimitParams, descriptors: Descriptors, now: number): LimitParams {
    const policy = rule.adaptive;
    const factor = policy === undefined ? 1 : this.#factorAt(rule.name, policy, now);
    if (rule.priority !== undefined && this.#prioritized.get(rule.name) !== rule)
      this.#prioritized.set(rule.name, rule);
    return scaledParams(params, this.#shareOf(rule, factor, descriptors));
  }

  /**
   * A decision, marked for observation when it let a request through adaptive rules (`decision.adaptive`),
   * and its sheds counted when priority or a factor below 1 denied it. The same object when neither applies.
   */
  settled(decision: Decision, descriptors: Descriptors): Decision {
    if (!decision.allowed) {
      this.#countSheds(decision, descriptors);
      return decision;
    }
    let names: string[] | undefined;
    for (const result of decision.results) {
      if (!this.#states.has(result.rule)) continue;
      names ??= [];
      names.push(result.rule);
    }
    return names === undefined ? decision : { ...decision, adaptive: names };
  }

  /** Records one response of a request that `settled` marked: its status and how long it took. */
  observe(rules: readonly string[], status: number, latencyMs: number, now: number): void {
    for (const name of rules) {
      const state = this.#states.get(name);
      if (state === undefined) continue;
      state.requests++;
      if (status >= 500) state.errors++;
      if (state.policy.latency !== undefined && latencyMs > state.policy.latency.maxMs) state.slow++;
      this.#maybeReport(state, now);
    }
  }

  /**
   * An application's circuit breaker drives a rule: open sets the floor, half open midway, closed lets AIMD
   * go on from there. The factor is written to the shared store at once, so the fleet follows.
   */
  setBreaker(name: string, policy: AdaptivePolicy, state: BreakerState, now: number): void {
    const ruleState = this.#stateOf(name, policy);
    const before = effective(ruleState);
    ruleState.pin = breakerFactor(state, policy);
    if (ruleState.pin !== undefined) ruleState.factor = ruleState.pin;
    if (effective(ruleState) !== before) this.#observer.onAdaptiveFactor(name, effective(ruleState));
    if (ruleState.pin !== undefined) this.#report(ruleState, now);
  }

  /**
   * `limiter.setBreaker(rule, state)`: the breaker state of the backend behind the adaptive rule of that name in
   * `table` (or one already checked, say a route rule). A wrong name or state is a ConfigError.
   */
  setBreakerOf(table: CompiledRules, name: string, state: BreakerState, now: number): void {
    if (!BREAKER_STATES.has(state))
      throw new ConfigError(
        `health: ${JSON.stringify(state)} is not a breaker state (open, half_open or closed)`,
      );
    const policy = table.rules.find((rule) => rule.name === name)?.adaptive ?? this.#states.get(name)?.policy;
    if (policy === undefined)
      throw new ConfigError(`health: no adaptive rule is named ${JSON.stringify(name)}`);
    this.setBreaker(name, policy, state, now);
  }

  /** A rule's factor now (1 for a rule not seen yet), for tests, explain and metrics. */
  factorOf(rule: string): number {
    const state = this.#states.get(rule);
    return state === undefined ? 1 : effective(state);
  }

  #factorAt(name: string, policy: AdaptivePolicy, now: number): number {
    const state = this.#stateOf(name, policy);
    this.#maybeReport(state, now);
    return effective(state);
  }

  #shareOf(rule: CompiledRule, factor: number, descriptors: Descriptors): number {
    if (rule.priority === undefined) return factor;
    const concurrent = descriptorOf(rule.algorithm).limit === 'concurrent';
    return shareOf(classOf(rule.priority, descriptors), factor, rule.adaptive?.shedBelow ?? 0, concurrent);
  }

  #stateOf(name: string, policy: AdaptivePolicy): RuleState {
    let state = this.#states.get(name);
    if (state === undefined) {
      // Reported at once: a gateway that joins picks up the fleet's factor with its first request.
      state = {
        name,
        policy,
        factor: 1,
        pin: undefined,
        requests: 0,
        errors: 0,
        slow: 0,
        lastReport: Number.NEGATIVE_INFINITY,
        reporting: false,
      };
      this.#states.set(name, state);
    }
    // A reloaded rule keeps its factor under its new policy.
    if (state.policy !== policy) state.policy = policy;
    return state;
  }

  #maybeReport(state: RuleState, now: number): void {
    if (state.reporting) return;
    // A clock that stepped back reports at once rather than waiting for it to catch up.
    if (now >= state.lastReport && now - state.lastReport < reportEveryMs(state.policy)) return;
    this.#report(state, now);
  }

  #report(state: RuleState, now: number): void {
    const report: FactorReport = {
      id: `${this.#domain()}/${state.name}`,
      policy: state.policy,
      requests: state.requests,
      errors: state.errors,
      slow: state.slow,
      ...(state.pin === undefined ? {} : { pin: state.pin }),
    };
    state.requests = 0;
    state.errors = 0;
    state.slow = 0;
    state.lastReport = now;
    let answer: number | Promise<number>;
    try {
      answer = this.#factors.adaptFactor(report, now);
    } catch {
      return;
    }
    if (!isThenable(answer)) {
      this.#apply(state, answer as number);
      return;
    }
    // A failed report loses its counts and keeps the last factor: the next report tries again.
    state.reporting = true;
    withTimeout(
      answer,
      REPORT_TIMEOUT_MS,
      () => new StoreError('ERR_SLUICE_STORE_TIMEOUT', 'adaptive factor report timed out'),
    ).then(
      (factor) => {
        state.reporting = false;
        this.#apply(state, factor);
      },
      () => {
        state.reporting = false;
      },
    );
  }

  #apply(state: RuleState, factor: number): void {
    if (typeof factor !== 'number' || !Number.isFinite(factor)) return;
    const before = effective(state);
    state.factor = clampFactor(factor, state.policy);
    if (effective(state) !== before) this.#observer.onAdaptiveFactor(state.name, effective(state));
  }

  #countSheds(decision: Decision, descriptors: Descriptors): void {
    for (const result of decision.results) {
      if (result.allowed || result.mode !== 'enforce') continue;
      const rule = this.#prioritized.get(result.rule);
      const factor = this.factorOf(result.rule);
      if (rule === undefined && factor >= 1) continue;
      const cls = classOf(rule?.priority, descriptors);
      const share = rule === undefined ? factor : this.#shareOf(rule, factor, descriptors);
      if (share < 1) this.#observer.onShed(result.rule, cls);
    }
  }
}

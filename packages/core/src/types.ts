/**
 * The contracts between the parts of Sluice: rules -> engine -> store -> decision.
 * Every other module implements or consumes these types.
 */

import type { AdaptivePolicy, PriorityClass, PriorityPolicy } from './adaptive/types.js';
import type { AlgorithmName } from './algorithms/index.js';
import type { CalendarPeriod, LimitParams, Outcome } from './algorithms/limits.js';
import type { ValueSet } from './lists/valueSet.js';
import type { BanPolicy, CountOutcome, Lease, Mode, RuleScope, StoreErrorKind } from './store/contract.js';

/** The store contract (store/contract.ts), read by every layer above it. */
export type * from './store/contract.js';

/** What a request is, as key/value pairs: `{ip, method, route, api_key, auth, tenant, ...}`. */
export type Descriptors = Readonly<Record<string, string | undefined>>;

/** The counting algorithms a rule can use: the names in the algorithm registry (algorithms/index.ts). */
/** What an algorithm decides with and returns (algorithms/limits.ts, so the algorithms need nothing from here). */
export type { AlgorithmName, CalendarPeriod, LimitParams, Outcome };

/**
 * One algorithm: a pure decision over explicit state and time. No clock, no I/O.
 * `state` is undefined for a key never seen (or expired).
 */
export interface Algorithm<S, P extends LimitParams = LimitParams> {
  readonly name: AlgorithmName;
  decide(state: S | undefined, now: number, params: P, cost: number): Outcome<S>;
}

/** How a rule prices a request. */
export type CostSpec =
  | number
  | { readonly descriptor: string; readonly max: number }
  | { readonly by: string; readonly values: Readonly<Record<string, number>>; readonly default: number };

/** What a rule does when its store fails: `allow` fails open, `deny` fails closed. */
export type OnStoreError = 'allow' | 'deny';

/** What a rule does when it matches: count (`limit`), refuse (`deny`) or exempt from other rules (`allow`). */
export type RuleAction = 'limit' | 'deny' | 'allow';

/**
 * A match field beyond plain equality: CIDR ranges (on `ip` and `client_ip`), a named list, or the negation of
 * either. Holds when the descriptor is present and is (with `not`: is not) among the values or in the list.
 */
export interface MatchCondition {
  /** Values and, on address fields, canonical CIDR ranges (`10.0.0.0/8`); empty when `list` is given. */
  readonly values: readonly string[];
  /** Name of a list given to the limiter (`lists` option), read at each request. */
  readonly list?: string;
  readonly not: boolean;
}

/** A validated, compiled rule. */
export interface CompiledRule {
  readonly name: string;
  /** Descriptor name -> accepted values (any of), for plain equality. Empty (and no conditions): every request. */
  readonly match: Readonly<Record<string, readonly string[]>>;
  /** Match fields that are not plain equality: address ranges, lists, negations. Absent when there are none. */
  readonly conditions?: Readonly<Record<string, MatchCondition>>;
  /** `deny` or `allow`; absent for `limit`, the default (such rules count nothing). */
  readonly action?: Exclude<RuleAction, 'limit'>;
  /** An allow rule's exemptions: the rules it lifts. Absent: every other rule that matches. */
  readonly exempt?: readonly string[];
  /** Descriptors whose values make the counter key; empty only for global rules. */
  readonly key: readonly string[];
  readonly global: boolean;
  readonly algorithm: AlgorithmName;
  readonly params: LimitParams;
  /** Undefined: the cost given in code, else 1. */
  readonly cost?: CostSpec;
  readonly mode: Mode;
  /** Percent (0-100) of keys, by stable hash, on which an enforce rule is enforced; the rest are shadowed. */
  readonly rollout: number;
  readonly onStoreError: OnStoreError;
  readonly overrides?: string;
  readonly owner?: string;
  /** ISO date (YYYY-MM-DD). */
  readonly review?: string;
  /** Epoch ms after which the rule no longer applies. */
  readonly expiresAt?: number;
  readonly scope: RuleScope;
  /** Hot keys: the counter is split over this many sub-counters, each holding limit/shards (absent: 1). */
  readonly shards?: number;
  /** Local leases: a gateway takes `batch` units at once from the store and spends them in process. */
  readonly lease?: LocalLease;
  /** Bans after repeated denials of a key. */
  readonly ban?: BanPolicy;
  /** Units a denied request is charged (as far as the limit has room). */
  readonly penalty?: number;
  /** How long a charged request's Idempotency-Key is remembered: retries with it are not charged again. */
  readonly idempotentMs?: number;
  /** Which responses the counter keeps; only with the policies switched on (not yet). */
  readonly count?: CountOutcome;
  /** Retry-After of this rule's denials is lengthened by a random 0 to this share (0.1 for `10%`). */
  readonly retryJitter?: number;
  /** Limit scaled by a factor from backend health (AIMD), shared through the store. */
  readonly adaptive?: AdaptivePolicy;
  /** Class of the requests it counts, for shedding under pressure. */
  readonly priority?: PriorityPolicy;
}

/** How a rule's units are taken from the store in batches and spent locally (`lease: {batch: K}`). */
export interface LocalLease {
  /** Units taken per store call; overshoot is bounded by `batch` per gateway per window. */
  readonly batch: number;
}

/** An immutable, versioned rule table. */
export interface CompiledRules {
  readonly domain: string;
  /** Stable content hash: equal rules give equal versions. */
  readonly version: string;
  readonly rules: readonly CompiledRule[];
  /** Rules that apply to these descriptors at `now`, overrides resolved, expired rules left out. */
  match(descriptors: Descriptors, now: number, lists?: Lists): readonly CompiledRule[];
  /** Names of the lists the rules read (`match: {ip: {list: name}}`); the limiter must be given each. */
  readonly lists?: readonly string[];
  /** True when some rule's action is `deny` or `allow`: only then does the engine look for them. */
  readonly actions?: boolean;
  /** True when some rule has `adaptive` or `priority`: only then are limits scaled. */
  readonly adaptive?: boolean;
}

/**
 * A named set of values or CIDR ranges that can change while running (a watched file, a Redis set). Read on
 * every request that reaches a rule naming it, so `current` answers from memory.
 */
export interface ValueList {
  /** The entries in force now. */
  readonly current: ValueSet;
  /** Stops watching or refreshing. */
  close?(): Promise<void>;
}

/** Lists by the name rules give them. */
export type Lists = Readonly<Record<string, ValueList>>;

/** Rules that change while running: a watched file, a version distributed through Redis. */
export interface RulesSource {
  /** The last good table. */
  readonly current: CompiledRules;
  /** Calls `onRules` with each new good table and `onError` with each rejected one; returns an unsubscribe. */
  subscribe(onRules: (rules: CompiledRules) => void, onError?: (error: Error) => void): () => void;
  /** Stops watching. */
  close?(): Promise<void>;
}

/** Why a decision came out as it did. */
export type DecisionReason = 'allowed' | 'limit' | 'ban' | 'deny' | 'store_error' | 'timeout' | 'breaker';

/** One evaluated rule inside a decision. */
export interface RuleResult {
  readonly rule: string;
  /** Effective mode (rollout applied). */
  readonly mode: Mode;
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  /** Window length of the rule, for policy headers. */
  readonly windowMs: number;
  /** A shadow rule that would have denied. */
  readonly shadowDenied: boolean;
  /** The store failed for this rule and its on_store_error decided. */
  readonly failed: boolean;
  /** With `failed`: a store's in-process fallback counted instead (its denial is a 429, not a 503). */
  readonly fallback?: boolean;
  /** `deny` for a deny rule's result (nothing counted; a shadow one has `shadowDenied`). */
  readonly action?: 'deny';
  /** Denied (or, shadow, would have been) by a ban of the key: epoch ms when it ends. */
  readonly bannedUntil?: number;
  /** With `bannedUntil`: this request's denial started the ban. */
  readonly banStarted?: boolean;
  /** Allowed as a retry of a request already charged (same Idempotency-Key): charged nothing. */
  readonly replayed?: boolean;
}

/** The engine's answer for one request. */
export interface Decision {
  readonly allowed: boolean;
  /** The denying rule (the one with the longest retry time), or the most constrained rule when allowed. */
  readonly rule?: string;
  readonly retryAfterMs: number;
  readonly delayMs: number;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  /** The store failed and at least one rule was decided by its on_store_error. */
  readonly failedOpen: boolean;
  readonly reason: DecisionReason;
  readonly results: readonly RuleResult[];
  /**
   * Concurrency leases to release when the response ends (`limiter.release(decision)`), and leaky_bucket
   * places to hand back if the request is given up while it waits (`limiter.cancel(decision)`).
   */
  readonly leases: readonly Lease[];
  /** Version of the rule table the decision was made with. */
  readonly version: string;
  /** Adaptive rules the request passed: report its response's status and latency (`limiter.observe`). */
  readonly adaptive?: readonly string[];
  /**
   * Set when an action rule decided, with no store call: `deny` (refused by `rule`; adapters answer 403, no
   * Retry-After) or `allow` (`rule` exempted the request from every other rule). Absent otherwise.
   */
  readonly action?: 'deny' | 'allow';
  /** With `reason: 'ban'`: epoch ms when the ban of `rule` on this key ends (`retryAfterMs` is the rest). */
  readonly bannedUntil?: number;
}

/**
 * Hooks for metrics and logs. Every method is optional and may be sync or async; a hook that throws or rejects
 * is swallowed and counted (`limiter.health().observerFailures`), never thrown into the request path.
 */
export interface Observer {
  /**
   * Every decision, with the request's descriptors. The HTTP adapters build every built-in descriptor for
   * it, unless it is declared with one parameter (`onDecision(decision)`): then only those the rules read.
   */
  onDecision?(decision: Decision, descriptors: Descriptors): void;
  onStoreError?(kind: StoreErrorKind, error: Error): void;
  onStoreLatency?(seconds: number): void;
  onRulesLoaded?(rules: CompiledRules): void;
  onRulesError?(error: Error): void;
  onLeases?(rule: string, delta: number): void;
  /** An adaptive rule's factor changed (1: full limit). */
  onAdaptiveFactor?(rule: string, factor: number): void;
  /** A request of this class was denied by a rule under pressure (factor below 1, or priority's share). */
  onShed?(rule: string, priority: PriorityClass): void;
  /** An enforcing rule with `ban` banned a key (at the denial that started it), until epoch ms `until`. */
  onBan?(rule: string, until: number): void;
  /** An operator lifted a key's ban under a rule (`limiter.unban`); `lifted`: the key had one. */
  onUnban?(rule: string, lifted: boolean): void;
}

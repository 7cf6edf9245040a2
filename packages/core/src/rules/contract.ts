/**
 * The rules' contracts: what a request is (descriptors), what a rule compiles to, and the table and sources of
 * rules. Read by every layer above rules.
 */

import type { AlgorithmName } from '../algorithms/index.js';
import type { LimitParams } from '../algorithms/limits.js';
import type { Lists } from '../lists/contract.js';
import type { AdaptivePolicy, PriorityPolicy } from './adaptiveTypes.js';

/** `enforce` rules can deny; `shadow` rules are counted and reported, never acted on. */
export type Mode = 'enforce' | 'shadow';

/**
 * `store`: the limiter's store (with regions, the region's own); `local`: an in-process MemoryStore even when the
 * store is remote; `global`: one budget shared by every region, counted in the limiter's store against the
 * region's grant (regions/). A lease always lives in `store` or `local`.
 */
export type RuleScope = 'store' | 'local' | 'global';

/** `challenge: {after, difficulty, pass, for}`, compiled (see rules/stages.ts for the defaults). */
export interface ChallengePolicy {
  /** Counted violations (of the rule's `ban` count) from which a 429 carries a challenge. */
  readonly after: number;
  /** Leading zero bits of the first challenge; one more each later violation. */
  readonly difficulty: number;
  /** Requests a solution's pass lets through uncounted. */
  readonly passRequests: number;
  /** How long a pass lasts. */
  readonly passMs: number;
}

/** Bans after repeated denials: `ban: {after, within, for}` with `escalate: [...]`. */
export interface BanPolicy {
  /** Denials within `withinMs` that start a ban. */
  readonly after: number;
  readonly withinMs: number;
  /** Length of a first ban. */
  readonly forMs: number;
  /** Lengths of the following bans, growing; the last repeats. */
  readonly escalateMs?: readonly number[];
}

/** Which responses a rule's counter keeps: failures (status >= 400), successes, or these statuses. */
export type CountOutcome = 'failed' | 'succeeded' | readonly number[];

/** What a request is, as key/value pairs: `{ip, method, route, api_key, auth, tenant, ...}`. */
export type Descriptors = Readonly<Record<string, string | undefined>>;

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
  /** scope: global: the partition share's margin the rule states (absent: the limiter's `regions.margin`). */
  readonly partitionMargin?: number;
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
  /** Reserve and settle: the cost is an estimate; `limiter.settle` charges or gives back the difference. */
  readonly settle?: boolean;
  /** Retry-After of this rule's denials is lengthened by a random 0 to this share (0.1 for `10%`). */
  readonly retryJitter?: number;
  /** Escalation: share of the limit (0.8 for `80%`) past which an allowed request is warned. */
  readonly warnAt?: number;
  /** Escalation: the proof-of-work challenge between the 429s and the ban. */
  readonly challenge?: ChallengePolicy;
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
  /**
   * True when every rule only counts, in the limiter's store (no action, policy, `count`, `settle`, lease,
   * shards, adaptive limit or priority, no concurrency): the engine may take its lean path (engine/plainLane.ts).
   */
  readonly plain?: boolean;
}

/** Rules that change while running: a watched file, a version distributed through Redis. */
export interface RulesSource {
  /** The last good table. */
  readonly current: CompiledRules;
  /** Calls `onRules` with each new good table and `onError` with each rejected one; returns an unsubscribe. */
  subscribe(onRules: (rules: CompiledRules) => void, onError?: (error: Error) => void): () => void;
  /** Stops watching. */
  close?(): Promise<void>;
}

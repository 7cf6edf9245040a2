/** The engine's answer (Decision) and the hooks that observe it: what observers, logs and adapters read. */

import type { PriorityClass } from '../rules/adaptiveTypes.js';
import type { CompiledRules, Descriptors, Mode } from '../rules/contract.js';
import type { Lease, StoreErrorKind } from '../store/contract.js';

/** Why a decision came out as it did. */
export type DecisionReason =
  | 'allowed'
  | 'limit'
  | 'ban'
  | 'deny'
  | 'store_error'
  | 'timeout'
  | 'breaker'
  /** A `scope: global` rule decided on the region's fallback share: the global store is unreachable. */
  | 'global_unreachable';

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
  /** A denial its rule's `ban` counted: the key's violations so far (the escalation stage reads it). */
  readonly violations?: number;
  /** A rule with `settle`: a budget of units settled later (tokens); the `model` header form shows it so. */
  readonly settles?: boolean;
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
  /**
   * Leases held by a connection still open (a stream, a WebSocket) and renewed while it lives, by rule: +1 when
   * its response starts holding one, -1 when it ends (see engine/leaseKeeper.ts).
   */
  onHeld?(rule: string, delta: number): void;
  /** An adaptive rule's factor changed (1: full limit). */
  onAdaptiveFactor?(rule: string, factor: number): void;
  /** A request of this class was denied by a rule under pressure (factor below 1, or priority's share). */
  onShed?(rule: string, priority: PriorityClass): void;
  /** An enforcing rule with `ban` banned a key (at the denial that started it), until epoch ms `until`. */
  onBan?(rule: string, until: number): void;
  /** The global budget of `scope: global` rules, seen from this gateway's region (regions/): see RegionEvent. */
  onRegion?(event: RegionEvent): void;
  /** An operator lifted a key's ban under a rule (`limiter.unban`); `lifted`: the key had one; `tag`: its hashed key. */
  onUnban?(rule: string, lifted: boolean, tag: string): void;
}

/**
 * What a gateway's sync loop did with the global budget (regions/). Labels: region and rule, never a key.
 * `round`: one call to the global store; `slice`: units granted to the region; `charge`: units the region
 * admitted beyond its grant (first slice, partition, lost global data) added to the global count;
 * `unreachable` / `rejoined`: a partition episode begins / ends.
 */
export type RegionEvent =
  | {
      readonly kind: 'round';
      readonly region: string;
      readonly ok: boolean;
      readonly seconds: number;
      readonly counters: number;
    }
  | {
      readonly kind: 'slice' | 'charge';
      readonly region: string;
      readonly rule: string;
      readonly units: number;
    }
  | { readonly kind: 'unreachable'; readonly region: string }
  | { readonly kind: 'rejoined'; readonly region: string; readonly afterMs: number };

/**
 * The store contract: what the engine hands a store (checks, leases) and what it answers. Store authors
 * implement {@link Store}, usually over the evaluator (evaluate.ts).
 */

import type { AlgorithmName } from '../algorithms/index.js';
import type { LimitParams } from '../algorithms/limits.js';
import type { StoreErrorKind } from '../base/errors.js';
import type { AdaptivePolicy } from '../rules/adaptiveTypes.js';
import type { BanPolicy, CompiledRule, CountOutcome, Mode, RuleScope } from '../rules/contract.js';
import type { AuditLog } from './audit.js';
import type { Board } from './board.js';

/** One rule's counting work for one request, as the engine hands it to a store. */
export interface Check {
  /** Rule name: part of the counter identity. */
  readonly rule: string;
  /** Hash of the rule's key descriptor values; identifies the counter and is the Redis hash tag. */
  readonly tag: string;
  readonly algorithm: AlgorithmName;
  readonly params: LimitParams;
  readonly cost: number;
  /** Effective mode after rollout: a denying `enforce` check stops every check of the call from committing. */
  readonly mode: Mode;
  /** concurrency only: the id of the lease this request takes. */
  readonly leaseId?: string;
  /** The rule's bans, penalty and idempotency, decided in the same call; absent for rules with none. */
  readonly policy?: CheckPolicy;
  /** The request's hashed Idempotency-Key, for a rule with `policy.idempotentMs`; absent without one. */
  readonly idempotencyId?: string;
  /** Where an in-process store found this tag's counters last time; any store may ignore it. */
  readonly hint?: SlotHint;
}

/**
 * A cell the engine keeps beside a cached tag and hands over with every check of that tag: an in-process
 * store (MemoryStore) writes where it keeps the tag's counters and reads it back, so a busy key costs one map
 * lookup (the engine's, from the request's key values to the tag) rather than two. A store checks the slot
 * still holds the tag before trusting it, so a stale or foreign hint costs only the lookup it would have done.
 */
export interface SlotHint {
  /** A slot holding this tag's counters in the store that wrote it; -1 until one does. */
  slot: number;
}

/** What a store does around a rule's algorithm in the same call (see store/policies.ts). */
export interface CheckPolicy {
  /** Denials of the key are counted and, at `ban.after`, the key is banned. */
  readonly ban?: BanPolicy;
  /** Units a denied request is charged, as far as the limit has room. */
  readonly penalty?: number;
  /** How long a charged request's idempotency marker lasts: a retry with the same id is not charged again. */
  readonly idempotentMs?: number;
  /**
   * Reserve and settle (a rule with `settle`): the key may owe units a settle charged beyond its limit; the
   * store reads its debt key (see store/settle.ts) and denies until the debt is paid off.
   */
  readonly debt?: boolean;
}

/** A store's answer for one check: the algorithm outcome without its state. */
export interface CheckResult {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  readonly delayMs?: number;
  /** Set when a store answered from its in-process fallback instead of the real store. */
  readonly degraded?: StoreErrorKind;
  /** Denied by a ban of the key: epoch ms when the ban ends. */
  readonly bannedUntil?: number;
  /** With `bannedUntil`: this denial started the ban. */
  readonly banStarted?: boolean;
  /** Allowed by an idempotency marker: a retry of a request already charged, charged nothing. */
  readonly replayed?: boolean;
  /** A denial a `ban` counted and that started no ban: the key's violations so far in its count (1, 2, ...). */
  readonly violations?: number;
}

/**
 * Something a request holds in a store until its response ends: a concurrency lease, or (with `refund`) a
 * leaky_bucket place in the queue, handed back only if the request is never served, or (with `refund.count`)
 * a charge handed back when the response's status is not one the rule counts.
 */
export interface Lease {
  readonly rule: string;
  readonly tag: string;
  /** The algorithm whose state holds it, so a store asks that algorithm's descriptor how to give it back. */
  readonly algorithm: AlgorithmName;
  /** The concurrency lease id ('' for a refund). */
  readonly id: string;
  /** A concurrency lease: how long it lasts unrenewed (the rule's `lease`); `renew` extends it by this much. */
  readonly leaseMs?: number;
  readonly scope: RuleScope;
  /** The units to give back and the rule's params; with `at`, when they were charged (see algorithms' Charge). */
  readonly refund?: {
    readonly cost: number;
    readonly params: LimitParams;
    readonly at?: number;
    readonly resetMs?: number;
    /** Counting by outcome: the statuses the rule keeps; any other status refunds the charge. */
    readonly count?: CountOutcome;
  };
  /**
   * Reserve and settle: `refund` holds the estimate charged at admission; the lease is not given back when the
   * response ends but settled by `limiter.settle` (engine/settle.ts).
   */
  readonly reserved?: boolean;
  /**
   * A settle above the estimate: units charged on top, without a limit check; what the key has no room for
   * becomes debt, paid off at the rule's rate (store/settle.ts).
   */
  readonly owed?: { readonly cost: number; readonly params: LimitParams };
}

/**
 * Where counters live. `evaluate` runs all checks of one request in ONE round trip and commits
 * nothing if an `enforce` check denies.
 */
export interface Store {
  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]>;
  /**
   * A store that answers in process declares it with this: `evaluate` without the promise (MemoryStore). The
   * engine then calls it instead of `evaluate`, with no promise and no time limit; results are only read.
   */
  evaluateNow?(checks: readonly Check[], now: number): CheckResult[];
  /**
   * True when every call settles (resolves or rejects) within the store's own time limit, as RedisStore's
   * do: the engine then adds no backstop timer of its own to each call.
   */
  readonly timeLimited?: boolean;
  release(leases: readonly Lease[], now: number): Promise<void>;
  /**
   * Extends each concurrency lease still held to `now + leaseMs`, all in one call (a long-lived response or
   * socket's heartbeat, see engine/leaseKeeper.ts). A lease released or expired stays gone: a renewal never
   * takes a unit back. Leases without `leaseId`/`leaseMs` (refunds) are ignored. Every store of this repo has
   * it; without it, a lease expires `leaseMs` after it was taken, however long its connection lives. Resolves
   * with how many of the leases it no longer held (expired, evicted, lost with the store's data), so that the
   * engine can say its connections stopped counting; a store that cannot tell resolves with nothing.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a store written before the count resolves with void.
  renew?(leases: readonly Lease[], now: number): Promise<number | void>;
  close(): Promise<void>;
  /** What a readiness probe reads; stores without a connection of their own may leave it out. */
  health?(): StoreHealth;
  /**
   * Lifts the ban of key `tag` under `rule` (its violations and escalation level go too); true when it had
   * one. Stores that enforce `ban` have it (MemoryStore, RedisStore).
   */
  unban?(rule: string, tag: string): Promise<boolean>;
  /**
   * Optional: shares adaptive factors across the fleet (one small key per rule, a few writes a second);
   * without it a limiter keeps them in process.
   */
  adaptFactor?: FactorStore['adaptFactor'];
  /** Optional: the gateways' boards of heavy hitters (store/board.ts); MemoryStore and RedisStore have one. */
  readonly board?: Board;
  /** Optional: the audit trail's append-only log (store/audit.ts); MemoryStore, RedisStore, PostgresStore have it. */
  readonly audit?: AuditLog;
}

/** A store's state for readiness probes and metrics, read without a round trip. */
export interface StoreHealth {
  /** False while the store cannot be reached (connection down, breaker open). */
  readonly connected: boolean;
  /** `closed`: calls go through; `open`: calls skip the store for a cool-down; `half_open`: one probe is out. */
  readonly breaker: 'closed' | 'open' | 'half_open';
  /** Calls sent and not yet settled. */
  readonly pending: number;
  /** Epoch ms since which calls have been failing open (or answered by the fallback); undefined when healthy. */
  readonly failingOpenSince?: number;
  /** Keys held, for stores that count them (MemoryStore). */
  readonly keys?: number;
  /** Keys evicted to stay within the store's bound since it started (MemoryStore). */
  readonly evictions?: number;
}

/** An application's circuit breaker state for a backend, as `limiter.setBreaker(rule, state)` takes it. */
export type BreakerState = 'open' | 'half_open' | 'closed';

/** One gateway's outcomes for an adaptive rule since its last report, folded into the fleet's factor. */
export interface FactorReport {
  /** The rule across the fleet: `domain/rule` (a store hashes it into its key). */
  readonly id: string;
  readonly policy: AdaptivePolicy;
  /** Responses observed, of which 5xx (`errors`) and slower than the latency target (`slow`). */
  readonly requests: number;
  readonly errors: number;
  readonly slow: number;
  /** A circuit breaker's say: the factor becomes this and the interval restarts. */
  readonly pin?: number;
}

/**
 * The optional store capability that shares adaptive factors: folds a report into the rule's shared state
 * (adaptive/aimd.ts `adaptFactor`) and answers the factor now. Called a few times a second per rule at most,
 * never per request.
 */
export interface FactorStore {
  adaptFactor(report: FactorReport, now: number): number | Promise<number>;
}

export type { StoreErrorKind };

/** One matched rule turned into store work (the engine plans them; adaptive limits scale them). */
export interface PlannedCheck {
  readonly rule: CompiledRule;
  readonly check: Check;
}

import { decideByName } from '../algorithms/index.js';
import type { LimitParams, Outcome } from '../algorithms/limits.js';
import type { BanPolicy } from '../rules/contract.js';
import type { Check, CheckPolicy, CheckResult } from './contract.js';

/*
 * What a store does around a rule's algorithm, in the same call, when the rule has a policy: bans after
 * repeated denials (escalating), a penalty charged to denied requests, and idempotency markers. Pure
 * functions over explicit state and `now`; MemoryStore applies them, and packages/redis/src/policy.ts is
 * the same in Lua (the shared vectors in test/vectors/policies prove both alike).
 */

/**
 * A key's violations and bans for one rule. In Redis, one string of these five numbers in this order:
 * "count since until level levelUntil".
 */
export interface BanState {
  /** Denials counted since `since`; the count starts afresh `within` after its first denial. */
  readonly count: number;
  readonly since: number;
  /** Epoch ms when the key's ban ends; 0 when it has none. */
  readonly until: number;
  /** Bans so far that still count for escalation: the next ban is number level + 1. */
  readonly level: number;
  /** Epoch ms after which `level` is forgotten: the end of the last ban plus the longest ban length. */
  readonly levelUntil: number;
}

/** An algorithm's outcome with what the policy adds: a ban, or an answer from an idempotency marker. */
export type PolicyOutcome = Outcome<unknown> &
  Pick<CheckResult, 'bannedUntil' | 'banStarted' | 'replayed' | 'violations'>;

/** What one check with a policy decided, and what the store writes for it. */
export interface PolicyStep {
  /** The answer; its state is written (and the marker set) only when allowed, `commit` and the call commits. */
  readonly outcome: PolicyOutcome;
  /** False for an answer from a marker: nothing was charged, nothing is written. */
  readonly commit: boolean;
  /** The key's new violations and ban: written at once, whatever the other checks of the call decide. */
  readonly ban?: { readonly state: BanState; readonly ttlMs: number };
  /** The counter after the penalty of a denied request: written at once, like `ban`. */
  readonly penalty?: Outcome<unknown>;
}

/** Length of ban number `level` (1 is the first): `for`, then each `escalate` step, the last repeating. */
export function banLengthMs(policy: BanPolicy, level: number): number {
  const steps = policy.escalateMs;
  if (level <= 1 || steps === undefined || steps.length === 0) return policy.forMs;
  return steps[Math.min(level - 2, steps.length - 1)]!;
}

/** The longest ban the policy gives: how long the escalation level is remembered after a ban ends. */
export function longestBanMs(policy: BanPolicy): number {
  let longest = policy.forMs;
  for (const step of policy.escalateMs ?? []) if (step > longest) longest = step;
  return longest;
}

/**
 * Milliseconds left of the key's ban at `now`, 0 when it has none. Never more than the longest ban: a ban
 * read after the clock stepped back does not grow.
 */
export function banLeftMs(state: BanState | undefined, policy: BanPolicy, now: number): number {
  if (state === undefined || !(state.until > now)) return 0;
  return Math.min(state.until - now, longestBanMs(policy));
}

/**
 * Counts one denial of the key. The count runs for `within` from its first denial, then starts afresh; at
 * `after` the key is banned for the next length of its escalation (`started`), and the count starts afresh.
 * `ttlMs`: how long the state matters (the count's run, the escalation level's memory).
 */
export function recordViolation(
  state: BanState | undefined,
  policy: BanPolicy,
  now: number,
): { readonly state: BanState; readonly ttlMs: number; readonly started: boolean } {
  const fresh =
    state === undefined ||
    !(state.count > 0) ||
    !(state.since <= now) ||
    now >= state.since + policy.withinMs;
  const count = fresh ? 1 : state.count + 1;
  const since = fresh ? now : state.since;
  const level = state !== undefined && state.levelUntil > now && state.level > 0 ? state.level : 0;
  if (count < policy.after) {
    const levelUntil = level > 0 ? state!.levelUntil : 0;
    return {
      state: { count, since, until: 0, level, levelUntil },
      ttlMs: Math.max(since + policy.withinMs, levelUntil) - now,
      started: false,
    };
  }
  const until = now + banLengthMs(policy, level + 1);
  const levelUntil = until + longestBanMs(policy);
  return {
    state: { count: 0, since: now, until, level: level + 1, levelUntil },
    ttlMs: levelUntil - now,
    started: true,
  };
}

/** The answer to a request of a banned key: denied until the ban ends, the counter left alone. */
export function bannedOutcome(
  state: unknown,
  params: LimitParams,
  leftMs: number,
  now: number,
  started: boolean,
): PolicyOutcome {
  return {
    allowed: false,
    state,
    limit: params.limit,
    remaining: 0,
    resetMs: leftMs,
    retryAfterMs: leftMs,
    ttlMs: 0,
    bannedUntil: now + leftMs,
    banStarted: started,
  };
}

/** The answer to a retry of a request already charged: allowed, nothing charged, the counter as it is. */
function replayOutcome(check: Check, state: unknown, now: number): PolicyOutcome {
  const peek = decideByName(check.algorithm, state, now, check.params, 0, check.leaseId);
  return {
    allowed: true,
    state,
    limit: peek.limit,
    remaining: peek.remaining,
    resetMs: peek.resetMs,
    retryAfterMs: 0,
    ttlMs: 0,
    replayed: true,
  };
}

/**
 * The counter after a denied request's penalty, and the denial as it reads after it (a longer wait), or
 * undefined when nothing can be charged. The penalty takes at most the units the limit has room for: the
 * key is never put in a state that allowed requests could not have put it in, so its wait stays within
 * what the algorithm gives a full counter.
 */
export function chargePenalty(
  check: Check,
  state: unknown,
  denied: Outcome<unknown>,
  penalty: number,
  now: number,
): { readonly charged: Outcome<unknown>; readonly denial: Outcome<unknown> } | undefined {
  const units = Math.min(penalty, Math.floor(denied.remaining));
  if (!(units >= 1)) return undefined;
  const charged = decideByName(check.algorithm, state, now, check.params, units, check.leaseId);
  if (!charged.allowed) return undefined;
  const after = decideByName(check.algorithm, charged.state, now, check.params, check.cost, check.leaseId);
  return { charged, denial: after.allowed ? denied : after };
}

/**
 * One check of a rule with a policy: a banned key is denied without touching its counter; a request whose
 * idempotency id is marked is allowed without being charged; otherwise the algorithm decides, and a denial
 * is charged the penalty and counted towards a ban (the denial that reaches `after` answers with the ban).
 */
export function decidePolicy(
  check: Check,
  policy: CheckPolicy,
  state: unknown,
  ban: BanState | undefined,
  marked: boolean,
  now: number,
): PolicyStep {
  const banPolicy = policy.ban;
  if (banPolicy !== undefined) {
    const left = banLeftMs(ban, banPolicy, now);
    if (left > 0) return { outcome: bannedOutcome(state, check.params, left, now, false), commit: false };
  }
  if (marked) return { outcome: replayOutcome(check, state, now), commit: false };
  const outcome = decideByName(check.algorithm, state, now, check.params, check.cost, check.leaseId);
  if (outcome.allowed) return { outcome, commit: true };
  const penalty =
    policy.penalty === undefined ? undefined : chargePenalty(check, state, outcome, policy.penalty, now);
  const denial = penalty?.denial ?? outcome;
  if (banPolicy === undefined) return withPenalty({ outcome: denial, commit: false }, penalty?.charged);
  const violation = recordViolation(ban, banPolicy, now);
  // A counted denial says how many the key has so far: the challenge stage starts from it.
  const answer = violation.started
    ? bannedOutcome(state, check.params, violation.state.until - now, now, true)
    : { ...denial, violations: violation.state.count };
  return withPenalty(
    { outcome: answer, commit: false, ban: { state: violation.state, ttlMs: violation.ttlMs } },
    penalty?.charged,
  );
}

function withPenalty(step: PolicyStep, charged: Outcome<unknown> | undefined): PolicyStep {
  return charged === undefined ? step : { ...step, penalty: charged };
}

/** Whether a value read back from a store is a ban state (five finite numbers). */
export function isBanState(value: unknown): value is BanState {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return ['count', 'since', 'until', 'level', 'levelUntil'].every((field) => Number.isFinite(s[field]));
}

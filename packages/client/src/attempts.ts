import { retryDelay } from './backoff.js';
import { emit, type GiveUpReason, type RefusalCode } from './events.js';
import type { HeaderSource } from './headerSource.js';
import { readModelBudget } from './modelFields.js';
import type { ResolvedClientOptions } from './options.js';
import type { OriginState } from './origins.js';
import type { NoRetryReason } from './plan.js';
import { type RateLimitInfo, readRateLimits } from './rateLimitFields.js';
import { parseRetryAfter } from './retryAfter.js';
import type { TokenBudget } from './tokenBudget.js';

/** What the attempt logic needs of a request, whichever API sends it (fetch, an undici dispatch). */
export interface Target {
  readonly url: URL;
  readonly method: string;
  readonly noRetry: NoRetryReason | undefined;
  readonly signal: AbortSignal | undefined;
}

/** Waits for a spent policy's reset at most this many times before the request goes anyway. */
const MAX_PACING_ROUNDS = 100;

/**
 * Waits for the request's pacing slot (when pacing); answers its reservation number. While a policy is
 * spent, waits for its reset and asks again. A wait past the longest allowed is not made: the request
 * goes at once, and the server's answer says what to do. `atOnce` (a challenge's solution, which the server
 * decides with the spent rule left out) takes a slot without waiting, so the answer is still applied in order.
 */
export async function paced(
  settings: ResolvedClientOptions,
  state: OriginState,
  target: Target,
  attempt: number,
  atOnce = false,
): Promise<number> {
  if (!settings.pacing) return 0;
  const path = target.url.pathname;
  const start = settings.now();
  if (atOnce) return state.pacer.reserve(path, start, true).seq;
  for (let round = 1; ; round++) {
    const now = settings.now();
    let slot = state.pacer.reserve(path, now);
    // A clock that does not move with the waits (an injected one) must not keep a request here for ever.
    if (slot.sendAt - start > settings.maxWaitMs || round > MAX_PACING_ROUNDS) {
      slot = state.pacer.reserve(path, now, true);
    }
    const ms = slot.sendAt - now;
    if (ms > 0 && slot.sendAt - start <= settings.maxWaitMs)
      await waitToPace(settings, target, attempt, ms, slot.policy ?? '');
    if (slot.taken) return slot.seq;
  }
}

/**
 * Waits until `budget` (the origin's tokens, a GraphQL endpoint's cost points) holds `cost` (the request's
 * estimate), then takes it; answers the reservation number. A wait past the longest allowed is not made: the
 * request goes, and the server's answer says what to do. `policy` names the budget in the `wait` event.
 */
export async function tokensPaced(
  settings: ResolvedClientOptions,
  budget: TokenBudget,
  target: Target,
  attempt: number,
  cost: number,
  policy = 'tokens',
): Promise<number> {
  const start = settings.now();
  for (let round = 1; round <= MAX_PACING_ROUNDS; round++) {
    const now = settings.now();
    const ms = budget.waitFor(cost, now);
    if (ms <= 0 || now + ms - start > settings.maxWaitMs) break;
    await waitToPace(settings, target, attempt, ms, policy);
  }
  return budget.take(cost);
}

/** A pacing wait before attempt `attempt`, telling the `wait` hook which policy set it. */
function waitToPace(
  settings: ResolvedClientOptions,
  target: Target,
  attempt: number,
  ms: number,
  policy: string,
): Promise<void> {
  const { origin } = target.url;
  emit(settings.events.wait, { origin, method: target.method, reason: 'pacing', ms, attempt, policy });
  return settings.sleep(ms, target.signal);
}

/** Reads an answer's rate-limit fields into the pacer and the token budget (when pacing); answers them. */
export function observe(
  settings: ResolvedClientOptions,
  state: OriginState,
  target: Target,
  seq: number,
  headers: HeaderSource,
  tokenSeq = 0,
): RateLimitInfo[] {
  if (!settings.pacing) return [];
  const now = settings.now();
  if (tokenSeq > 0) state.tokens.observe(tokenSeq, readModelBudget(headers, 'tokens'), now);
  const infos = readRateLimits(headers, now);
  state.pacer.observe(target.url.pathname, seq, infos, now);
  return infos;
}

/** A refused answer: its status, the attempt it answered, its headers, and a wait its body named (GraphQL's). */
export interface Answer {
  readonly status: number;
  readonly attempt: number;
  readonly headers: HeaderSource;
  /** The wait a GraphQL THROTTLED error asked for, ms: it comes before Retry-After, which has whole seconds. */
  readonly waitMs?: number | undefined;
  /** Set when the body refused the call (a GraphQL THROTTLED error), whatever the status. */
  readonly code?: RefusalCode | undefined;
}

/**
 * What to do with a refused answer (a `retryOn` status): the wait before the next attempt, spending a
 * retry from the budget; or undefined when the answer goes back to the caller. Emits the events.
 */
export function nextWait(
  settings: ResolvedClientOptions,
  state: OriginState,
  target: Target,
  answer: Answer,
  infos: readonly RateLimitInfo[],
): number | undefined {
  const { events } = settings;
  const delayMs = retryDelay({
    serverWaitMs: answer.waitMs ?? serverWait(answer.headers, infos, settings.now()),
    attempt: answer.attempt,
    jitterMs: settings.jitterMs,
    backoff: settings.backoff,
    random: settings.random,
  });
  const refused = {
    origin: target.url.origin,
    method: target.method,
    status: answer.status,
    attempt: answer.attempt,
    ...(answer.code === undefined ? {} : { code: answer.code }),
  };
  const reason = giveUpReason(settings, state, target, answer.attempt, delayMs);
  if (reason !== undefined) {
    const event = { ...refused, reason };
    if (reason === 'budget_exhausted') emit(events.budgetExhausted, event);
    emit(events.giveUp, event);
    return undefined;
  }
  emit(events.retry, { ...refused, delayMs });
  return delayMs;
}

/**
 * Spends a retry from the origin's budget for sending a challenge's solution: true when there was one.
 * A solution is a retry of the refused request, so a client that keeps being challenged is bounded as one
 * that keeps being refused; when the budget is spent the 429 goes back (the `budgetExhausted` event).
 */
export function spendOnSolution(
  settings: ResolvedClientOptions,
  state: OriginState,
  target: Target,
  attempt: number,
): boolean {
  if (state.budget === undefined || state.budget.spend()) return true;
  const event = {
    origin: target.url.origin,
    method: target.method,
    status: 429,
    attempt,
    reason: 'budget_exhausted' as const,
  };
  emit(settings.events.budgetExhausted, event);
  emit(settings.events.giveUp, event);
  return false;
}

/** Waits before attempt `attempt` (a retry), telling the `wait` hook. */
export function waitToRetry(
  settings: ResolvedClientOptions,
  target: Target,
  attempt: number,
  ms: number,
): Promise<void> {
  emit(settings.events.wait, {
    origin: target.url.origin,
    method: target.method,
    reason: 'retry',
    ms,
    attempt,
  });
  return settings.sleep(ms, target.signal);
}

/** Why the refused attempt is the last one, or undefined to retry (spending a retry from the budget). */
function giveUpReason(
  settings: ResolvedClientOptions,
  state: OriginState,
  target: Target,
  attempt: number,
  delayMs: number,
): GiveUpReason | undefined {
  if (target.noRetry !== undefined) return target.noRetry;
  if (attempt >= settings.maxAttempts) return 'max_attempts';
  if (delayMs > settings.maxWaitMs) return 'wait_too_long';
  if (state.budget !== undefined && !state.budget.spend()) return 'budget_exhausted';
  return undefined;
}

/** The wait the server asked for: Retry-After, else the reset of a policy with nothing remaining. */
function serverWait(headers: HeaderSource, infos: readonly RateLimitInfo[], now: number): number | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  let wait: number | undefined;
  for (const info of infos) if (info.remaining === 0) wait = Math.max(wait ?? 0, info.resetMs);
  return wait;
}

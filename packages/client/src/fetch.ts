import { retryDelay } from './backoff.js';
import { emit, type GiveUpReason } from './events.js';
import { type ClientOptions, type ResolvedClientOptions, resolveOptions } from './options.js';
import { type OriginState, Origins } from './origins.js';
import { type FetchInput, planRequest, type RequestPlan } from './plan.js';
import { type RateLimitInfo, readRateLimits } from './rateLimitFields.js';
import { parseRetryAfter } from './retryAfter.js';

/**
 * A `fetch` that paces requests by the RateLimit fields of earlier responses, and retries 429 and 503
 * after Retry-After plus jitter, within a number of attempts, a longest wait and a per-origin retry budget.
 * Same signature and result as `fetch`: a refused request that is not retried resolves with its response.
 */
export function createFetch(options?: ClientOptions): typeof fetch {
  const settings = resolveOptions(options);
  const origins = new Origins(settings);
  return function sluiceFetch(input: FetchInput, init?: RequestInit): Promise<Response> {
    let plan: RequestPlan;
    try {
      plan = planRequest(input, init, settings);
    } catch {
      // Not an absolute URL, say: fetch itself gives the error it always gives.
      return settings.fetch(input, init);
    }
    return send(settings, origins.get(plan.url.origin), plan);
  };
}

/** Sends the attempts of one request. */
async function send(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
): Promise<Response> {
  const { events } = settings;
  const about = { origin: plan.url.origin, method: plan.method };
  state.budget?.earn();
  for (let attempt = 1; ; attempt++) {
    const { response, infos } = await sendOne(settings, state, plan, attempt);
    if (!settings.retryOn.has(response.status)) return response;

    const delayMs = retryDelay({
      serverWaitMs: serverWait(response, infos, settings.now()),
      attempt,
      jitterMs: settings.jitterMs,
      backoff: settings.backoff,
      random: settings.random,
    });
    const refused = { ...about, status: response.status, attempt };
    const reason = giveUpReason(settings, plan, attempt, delayMs, state);
    if (reason !== undefined) {
      const event = { ...refused, reason };
      if (reason === 'budget_exhausted') emit(events.budgetExhausted, event);
      emit(events.giveUp, event);
      return response;
    }
    emit(events.retry, { ...refused, delayMs });
    // The refused body is not needed; reading nothing of it frees the connection.
    await response.body?.cancel().catch(() => {});
    emit(events.wait, { ...about, reason: 'retry', ms: delayMs, attempt: attempt + 1 });
    await settings.sleep(delayMs, plan.signal);
  }
}

/** One attempt's response, and what its RateLimit fields said. */
interface Sent {
  readonly response: Response;
  readonly infos: readonly RateLimitInfo[];
}

/**
 * Sends one attempt in its pacing slot. While pacing, the first request to an origin goes alone (see
 * FirstAnswer), and the others take their slots once its answer has said how fast to go.
 */
async function sendOne(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  attempt: number,
): Promise<Sent> {
  const probe = settings.pacing && (await state.firstAnswer.turn(plan.signal));
  let answered = false;
  try {
    const seq = await paced(settings, state, plan, attempt);
    const response = await settings.fetch(...plan.args(attempt));
    const now = settings.now();
    const infos = settings.pacing ? readRateLimits(response.headers, now) : [];
    // Applied before the probe lets the others go: they take their slots from this answer.
    if (settings.pacing) state.pacer.observe(plan.url.pathname, seq, infos, now);
    answered = true;
    return { response, infos };
  } finally {
    if (probe) state.firstAnswer.settle(answered);
  }
}

/** Waits for a spent policy's reset at most this many times before the request goes anyway. */
const MAX_PACING_ROUNDS = 100;

/**
 * Waits for the request's pacing slot (when pacing); answers its reservation number. While a policy is
 * spent, waits for its reset and asks again. A wait past the longest allowed is not made: the request
 * goes at once, and the server's answer says what to do.
 */
async function paced(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  attempt: number,
): Promise<number> {
  if (!settings.pacing) return 0;
  const path = plan.url.pathname;
  const start = settings.now();
  for (let round = 1; ; round++) {
    const now = settings.now();
    let slot = state.pacer.reserve(path, now);
    // A clock that does not move with the waits (an injected one) must not keep a request here for ever.
    if (slot.sendAt - start > settings.maxWaitMs || round > MAX_PACING_ROUNDS) {
      slot = state.pacer.reserve(path, now, true);
    }
    const ms = slot.sendAt - now;
    if (ms > 0 && slot.sendAt - start <= settings.maxWaitMs) {
      emit(settings.events.wait, {
        origin: plan.url.origin,
        method: plan.method,
        reason: 'pacing',
        ms,
        attempt,
        policy: slot.policy ?? '',
      });
      await settings.sleep(ms, plan.signal);
    }
    if (slot.taken) return slot.seq;
  }
}

/** Why the refused attempt is the last one, or undefined to retry (spending a retry from the budget). */
function giveUpReason(
  settings: ResolvedClientOptions,
  plan: RequestPlan,
  attempt: number,
  delayMs: number,
  state: OriginState,
): GiveUpReason | undefined {
  if (plan.noRetry !== undefined) return plan.noRetry;
  if (attempt >= settings.maxAttempts) return 'max_attempts';
  if (delayMs > settings.maxWaitMs) return 'wait_too_long';
  if (state.budget !== undefined && !state.budget.spend()) return 'budget_exhausted';
  return undefined;
}

/** The wait the server asked for: Retry-After, else the reset of a policy with nothing remaining. */
function serverWait(response: Response, infos: readonly RateLimitInfo[], now: number): number | undefined {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), now);
  if (retryAfter !== undefined) return retryAfter;
  let wait: number | undefined;
  for (const info of infos) if (info.remaining === 0) wait = Math.max(wait ?? 0, info.resetMs);
  return wait;
}

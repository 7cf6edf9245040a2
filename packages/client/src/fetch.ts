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
  const { events, now } = settings;
  const about = { origin: plan.url.origin, method: plan.method };
  const path = plan.url.pathname;
  state.budget?.earn();
  for (let attempt = 1; ; attempt++) {
    const seq = await paced(settings, state, plan, attempt);
    const response = await settings.fetch(...plan.args(attempt));
    const infos = settings.pacing ? readRateLimits(response.headers, now()) : [];
    if (settings.pacing) state.pacer.observe(path, seq, infos, now());
    if (!settings.retryOn.has(response.status)) return response;

    const delayMs = retryDelay({
      serverWaitMs: serverWait(response, infos, now()),
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

/** Waits for the request's pacing slot (when pacing); answers its reservation number. */
async function paced(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  attempt: number,
): Promise<number> {
  if (!settings.pacing) return 0;
  const now = settings.now();
  const slot = state.pacer.reserve(plan.url.pathname, now);
  const ms = slot.sendAt - now;
  // A wait past the longest allowed is not made: the server's answer then says what to do.
  if (ms > 0 && ms <= settings.maxWaitMs) {
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
  return slot.seq;
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

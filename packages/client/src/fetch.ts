import { nextWait, observe, paced, tokensPaced, waitToRetry } from './attempts.js';
import { type ClientOptions, type ResolvedClientOptions, resolveOptions } from './options.js';
import { type OriginState, Origins } from './origins.js';
import { type FetchInput, planRequest, type RequestPlan } from './plan.js';
import type { RateLimitInfo } from './rateLimitFields.js';

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
    let cost: number;
    try {
      cost = estimateOf(settings, plan, init);
    } catch (error) {
      return Promise.reject(error);
    }
    return send(settings, origins.get(plan.url.origin), plan, cost);
  };
}

/** Sends the attempts of one request. */
async function send(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  cost: number,
): Promise<Response> {
  state.budget?.earn();
  for (let attempt = 1; ; attempt++) {
    const { response, infos } = await sendOne(settings, state, plan, attempt, cost);
    if (!settings.retryOn.has(response.status)) return response;
    const answer = { status: response.status, attempt, headers: response.headers };
    const delayMs = nextWait(settings, state, plan, answer, infos);
    if (delayMs === undefined) return response;
    // The refused body is not needed; reading nothing of it frees the connection.
    await response.body?.cancel().catch(() => {});
    await waitToRetry(settings, plan, attempt + 1, delayMs);
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
  cost: number,
): Promise<Sent> {
  const probe = settings.pacing && (await state.firstAnswer.turn(plan.signal));
  let answered = false;
  let tokenSeq = 0;
  try {
    const seq = await paced(settings, state, plan, attempt);
    if (cost > 0 && settings.pacing) tokenSeq = await tokensPaced(settings, state, plan, attempt, cost);
    const response = await settings.fetch(...plan.args(attempt));
    // Applied before the probe lets the others go: they take their slots from this answer.
    const infos = observe(settings, state, plan, seq, response.headers, tokenSeq);
    answered = true;
    return { response, infos };
  } finally {
    // A request that got no answer (a network error, an abort) is no longer in flight.
    if (!answered && tokenSeq > 0) state.tokens.observe(tokenSeq, undefined, settings.now());
    if (probe) state.firstAnswer.settle(answered);
  }
}

/**
 * The request's estimated tokens (0 without `estimate`). An estimate that is not a number >= 0 is a bug in
 * the caller's function: it rejects the call with a TypeError rather than pace on a guess.
 */
function estimateOf(
  settings: ResolvedClientOptions,
  plan: RequestPlan,
  init: RequestInit | undefined,
): number {
  if (settings.estimate === undefined) return 0;
  const cost = settings.estimate({ url: plan.url, method: plan.method, body: init?.body ?? undefined });
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0)
    throw new TypeError(`@sluice/client: estimate must return a number >= 0, got ${String(cost)}`);
  return cost;
}

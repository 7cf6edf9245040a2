import { nextWait, observe, paced, spendOnSolution, tokensPaced, waitToRetry } from './attempts.js';
import { challengeOf, PASS_HEADER, PASS_OVER_HEADER, SOLUTION_HEADER, solveChallenge } from './challenge.js';
import { emit } from './events.js';
import { type GraphqlCall, graphqlCall, sendGraphql } from './graphqlCall.js';
import { type GraphqlAnswer, throttledWaitMs } from './graphqlCost.js';
import { type ClientOptions, type ResolvedClientOptions, resolveOptions } from './options.js';
import { type OriginState, Origins } from './origins.js';
import { type FetchInput, planRequest, type RequestPlan } from './plan.js';
import type { RateLimitInfo } from './rateLimitFields.js';

/** `fetch`'s options, and the client's own for one call. */
export interface SluiceRequestInit extends RequestInit {
  /**
   * What this GraphQL call will cost, in the server's points: the client waits until the endpoint's budget
   * holds it before sending (see the `graphql` option; a call given a cost is paced as one). Not sent.
   */
  cost?: number;
}

/** The fetch {@link createFetch} makes: `fetch`'s signature and result, and a `cost` per call. */
export type SluiceFetch = (input: FetchInput, init?: SluiceRequestInit) => Promise<Response>;

/**
 * A `fetch` that paces requests by the RateLimit fields of earlier responses, and retries 429 and 503
 * after Retry-After plus jitter, within a number of attempts, a longest wait and a per-origin retry budget.
 * Same signature and result as `fetch`: a refused request that is not retried resolves with its response.
 */
export function createFetch(options?: ClientOptions): SluiceFetch {
  const settings = resolveOptions(options);
  const origins = new Origins(settings);
  return function sluiceFetch(input: FetchInput, given?: SluiceRequestInit): Promise<Response> {
    const { init, cost: callCost } = withoutCost(given);
    let plan: RequestPlan;
    try {
      plan = planRequest(input, init, settings);
    } catch {
      // Not an absolute URL, say: fetch itself gives the error it always gives.
      return settings.fetch(input, init);
    }
    let cost: number;
    let call: GraphqlCall | undefined;
    try {
      cost = estimateOf(settings, plan, init);
      call = graphqlCall(settings.graphql, plan, init?.body ?? undefined, callCost);
    } catch (error) {
      return Promise.reject(error);
    }
    return send(settings, origins.get(plan.url.origin), plan, { cost, call });
  };
}

/** The call's `fetch` options without the client's own `cost`, which is not sent. */
function withoutCost(given: SluiceRequestInit | undefined): {
  init: RequestInit | undefined;
  cost: number | undefined;
} {
  if (given === undefined || !('cost' in given)) return { init: given, cost: undefined };
  const { cost, ...init } = given;
  return { init, cost };
}

/** What one request is priced at: its estimated tokens (0 without `estimate`), and the GraphQL call it is. */
interface Pricing {
  readonly cost: number;
  readonly call: GraphqlCall | undefined;
}

/** Sends the attempts of one request. */
async function send(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  { cost, call }: Pricing,
): Promise<Response> {
  state.budget?.earn();
  let solution: string | undefined;
  let justSolved = false;
  for (let attempt = 1; ; attempt++) {
    const extra = challengeHeaders(state, solution);
    const attemptSpec = { attempt, cost, call, extra, atOnce: justSolved };
    const { response, infos, graphql } = await sendOne(settings, state, plan, attemptSpec);
    justSolved = false;
    const throttled = graphql?.throttled === true ? graphql : undefined;
    if (!settings.retryOn.has(response.status) && throttled === undefined)
      return keepPass(state, response, extra);
    // A challenge, solved once per request: sent again at once with the solution, as the same attempt. Not
    // paced: the server decides it with the spent rule left out, so the 429's reset does not apply to it.
    if (solution === undefined && response.status === 429 && throttled === undefined) {
      const solving = await solved(settings, state, plan, { response, attempt, sent: extra });
      if (solving === BUDGET_SPENT) return response;
      if (solving !== undefined) {
        solution = solving;
        justSolved = true;
        attempt--;
        continue;
      }
    }
    const answer = { status: response.status, attempt, headers: response.headers, ...refusal(throttled) };
    // A THROTTLED call was refused before it ran: sending it again runs it once, whatever its method.
    const target = throttled && plan.noRetry === 'not_idempotent' ? { ...plan, noRetry: undefined } : plan;
    const delayMs = nextWait(settings, state, target, answer, infos);
    if (delayMs === undefined) return response;
    // The refused body is not needed; reading nothing of it frees the connection.
    await response.body?.cancel().catch(() => {});
    await waitToRetry(settings, plan, attempt + 1, delayMs);
  }
}

/** Headers of the challenge: the solution to send, else the origin's pass; undefined when neither. */
function challengeHeaders(
  state: OriginState,
  solution: string | undefined,
): Readonly<Record<string, string>> | undefined {
  if (solution !== undefined) return { [SOLUTION_HEADER]: solution };
  return state.pass === undefined ? undefined : { [PASS_HEADER]: state.pass };
}

/** Keeps the pass an answer brings; forgets the one sent when the server says it is over. */
function keepPass(
  state: OriginState,
  response: Response,
  sent: Readonly<Record<string, string>> | undefined,
): Response {
  const pass = response.headers.get(PASS_HEADER);
  if (pass !== null) state.pass = pass;
  else if (response.headers.has(PASS_OVER_HEADER) && state.pass === sent?.[PASS_HEADER])
    state.pass = undefined;
  return response;
}

/** `solved` found a challenge, but the origin's retry budget had no retry left to send its solution. */
const BUDGET_SPENT = Symbol('budget spent');

/** A 429 that may carry a challenge: the response, the attempt it answered, the challenge headers it was sent with. */
interface Refused {
  readonly response: Response;
  readonly attempt: number;
  readonly sent: Readonly<Record<string, string>> | undefined;
}

/**
 * The solution of the 429's challenge, when it carries one the client takes (see `challenge`) and the retry
 * budget has a retry for it; the pass sent with it, used up, is forgotten. Undefined when there is none to
 * solve; BUDGET_SPENT when the budget is spent (the 429 goes back as it is, its body unread).
 */
async function solved(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  { response, attempt, sent }: Refused,
): Promise<string | typeof BUDGET_SPENT | undefined> {
  if (sent?.[PASS_HEADER] !== undefined && state.pass === sent[PASS_HEADER]) state.pass = undefined;
  if (settings.maxDifficulty === 0 || plan.noRetry !== undefined) return undefined;
  const challenge = challengeOf(response.headers, settings.maxDifficulty);
  if (challenge === undefined) return undefined;
  if (!spendOnSolution(settings, state, plan, attempt)) return BUDGET_SPENT;
  await response.body?.cancel().catch(() => {});
  const started = settings.now();
  const solution = await solveChallenge(challenge, plan.signal);
  const event = { origin: plan.url.origin, method: plan.method, difficulty: challenge.difficulty };
  emit(settings.events.solved, { ...event, ms: settings.now() - started });
  return solution;
}

/** What a THROTTLED answer adds to a refusal: its code, and the wait its body asked for. */
function refusal(throttled: GraphqlAnswer | undefined): { code?: 'THROTTLED'; waitMs?: number | undefined } {
  return throttled === undefined ? {} : { code: 'THROTTLED', waitMs: throttledWaitMs(throttled) };
}

/** One attempt's response, what its RateLimit fields said, and what its GraphQL body said of the cost. */
interface Sent {
  readonly response: Response;
  readonly infos: readonly RateLimitInfo[];
  readonly graphql?: GraphqlAnswer | undefined;
}

/**
 * One attempt to send: its number, its token estimate, the GraphQL call it is, its challenge headers, and
 * whether it skips pacing waits.
 */
interface AttemptSpec {
  readonly attempt: number;
  readonly cost: number;
  readonly call: GraphqlCall | undefined;
  readonly extra: Readonly<Record<string, string>> | undefined;
  /** A challenge's solution: sent without a pacing wait (see `paced`). */
  readonly atOnce: boolean;
}

/**
 * Sends one attempt in its pacing slot. While pacing, the first request to an origin goes alone (see
 * FirstAnswer), and the others take their slots once its answer has said how fast to go.
 */
async function sendOne(
  settings: ResolvedClientOptions,
  state: OriginState,
  plan: RequestPlan,
  { attempt, cost, call, extra, atOnce }: AttemptSpec,
): Promise<Sent> {
  const probe = settings.pacing && (await state.firstAnswer.turn(plan.signal));
  let answered = false;
  let tokenSeq = 0;
  try {
    const seq = await paced(settings, state, plan, attempt, atOnce);
    if (cost > 0 && settings.pacing)
      tokenSeq = await tokensPaced(settings, state.tokens, plan, attempt, cost);
    const sendIt = () => settings.fetch(...plan.args(attempt, extra));
    const { response, answer } =
      call === undefined
        ? { response: await sendIt(), answer: undefined }
        : await sendGraphql(settings, state.graphql, plan, { call, attempt }, sendIt);
    // Applied before the probe lets the others go: they take their slots from this answer.
    const infos = observe(settings, state, plan, seq, response.headers, tokenSeq);
    answered = true;
    return { response, infos, graphql: answer };
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

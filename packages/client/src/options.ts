import { type BackoffOptions, DEFAULT_BACKOFF } from './backoff.js';
import { DEFAULT_RETRY_BUDGET, type RetryBudgetOptions } from './budget.js';
import { type ChallengeOptions, DEFAULT_MAX_DIFFICULTY } from './challenge.js';
import { ClientConfigError } from './errors.js';
import type { ClientEvents } from './events.js';
import { checkNames } from './optionNames.js';
import { type Sleep, sleep } from './time.js';

/** Options of {@link createFetch}. */
export interface ClientOptions {
  /** The fetch that sends each attempt. Default: the global `fetch` when the client is created. */
  fetch?: typeof fetch;
  /** Attempts per request, the first included. Default 3. */
  maxAttempts?: number;
  /** The longest wait, ms: a refused request whose wait would be longer is given back at once. Default 60,000. */
  maxWaitMs?: number;
  /** Up to this much is added at random to a server-given wait, ms. Default 1000. */
  jitterMs?: number;
  /** Statuses that are retried. Default [429, 503]. */
  retryOn?: readonly number[];
  /** Waits of retries without a Retry-After. */
  backoff?: BackoffOptions;
  /** Retries per origin stay under a share of its requests; `false` turns the budget off. */
  retryBudget?: RetryBudgetOptions | false;
  /** Spread requests by the RateLimit fields of responses. Default true. */
  pacing?: boolean;
  /**
   * The tokens a request will cost (a model API's `max_tokens`, say), taken from the token budget the
   * `x-ratelimit-*-tokens` fields describe before the request is sent. Default: none, tokens are not paced.
   */
  estimate?: (request: EstimateRequest) => number;
  /**
   * Pace GraphQL calls by the budget of cost points their answers publish (`extensions.cost`, as Shopify's and
   * @sluice/graphql's do) and retry THROTTLED errors, whatever their status. The body of a GraphQL call's JSON
   * answer is read from a clone before the call resolves. Default false (a call given a `cost` is paced anyway).
   */
  graphql?: boolean;
  /** Add an `Idempotency-Key` to POST/PATCH requests without one: true (a random UUID) or a maker. Default false. */
  idempotencyKey?: boolean | (() => string);
  /** Header naming the attempt number on retries (`2`, `3`, ...). Default: none. */
  attemptHeader?: string;
  /**
   * Header naming the retry number on retries (`1`, `2`, ...), which Sluice servers read into their `retry`
   * descriptors so that rules can cap retry traffic; `false` sends none. Default `Retry-Attempt`.
   */
  retryHeader?: string | false;
  /** Hooks for logs and metrics. */
  events?: ClientEvents;
  /** Origins whose pacing and budget state is kept, the least recently used forgotten first. Default 1000. */
  maxOrigins?: number;
  /** Milliseconds clock. Default `Date.now`. */
  now?: () => number;
  /** The wait. Default a timer; tests inject their own. */
  sleep?: Sleep;
  /** Random numbers in [0, 1). Default `Math.random`. */
  random?: () => number;
  /**
   * Solve a Sluice server's proof-of-work challenge (a 429 with `Sluice-Challenge`) and send the request again
   * with the solution, once per request; the pass it earns is sent on the origin's next requests. `false`: never.
   * Default `{maxDifficulty: 20}`.
   */
  challenge?: ChallengeOptions | false;
}

/** What `estimate` is given: the request as the caller passed it to fetch. */
export interface EstimateRequest {
  readonly url: URL;
  readonly method: string;
  /** `init.body` as given (a JSON string, typically), or undefined. */
  readonly body: RequestInit['body'] | undefined;
}

/** The options with defaults filled in. */
export interface ResolvedClientOptions {
  readonly fetch: typeof fetch;
  readonly maxAttempts: number;
  readonly maxWaitMs: number;
  readonly jitterMs: number;
  readonly retryOn: ReadonlySet<number>;
  readonly backoff: Required<BackoffOptions>;
  readonly retryBudget: Required<RetryBudgetOptions> | false;
  readonly pacing: boolean;
  readonly estimate: ((request: EstimateRequest) => number) | undefined;
  readonly graphql: boolean;
  readonly idempotencyKey: false | (() => string);
  readonly attemptHeader: string | false;
  readonly retryHeader: string | false;
  readonly events: ClientEvents;
  readonly maxOrigins: number;
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly random: () => number;
  /** The hardest challenge solved (leading zero bits); 0: challenges are not solved. */
  readonly maxDifficulty: number;
}

const KNOWN: readonly (keyof ClientOptions)[] = [
  'fetch',
  'maxAttempts',
  'maxWaitMs',
  'jitterMs',
  'retryOn',
  'backoff',
  'retryBudget',
  'pacing',
  'estimate',
  'graphql',
  'idempotencyKey',
  'attemptHeader',
  'retryHeader',
  'events',
  'maxOrigins',
  'now',
  'sleep',
  'random',
  'challenge',
];
const EVENTS: readonly (keyof ClientEvents)[] = ['wait', 'retry', 'budgetExhausted', 'giveUp', 'solved'];

/** The header Sluice servers read a retry's number from. */
export const DEFAULT_RETRY_HEADER = 'Retry-Attempt';

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Checks the options and fills in defaults; a wrong or unknown option throws a {@link ClientConfigError}. */
export function resolveOptions(options: ClientOptions = {}): ResolvedClientOptions {
  checkNames('@sluice/client', options, KNOWN);
  checkNames('@sluice/client: backoff', options.backoff, Object.keys(DEFAULT_BACKOFF));
  if (options.retryBudget !== false)
    checkNames('@sluice/client: retryBudget', options.retryBudget, Object.keys(DEFAULT_RETRY_BUDGET));
  checkNames('@sluice/client: events', options.events, EVENTS);
  if (options.challenge !== false)
    checkNames('@sluice/client: challenge', options.challenge, ['maxDifficulty']);
  const maxDifficulty =
    options.challenge === false ? 0 : (options.challenge?.maxDifficulty ?? DEFAULT_MAX_DIFFICULTY);
  if (!Number.isInteger(maxDifficulty) || maxDifficulty < 0 || maxDifficulty > 32)
    fail('challenge.maxDifficulty must be a whole number from 0 to 32');
  const base = options.fetch ?? globalThis.fetch;
  fn('fetch', base);
  const budget = options.retryBudget === false ? false : { ...DEFAULT_RETRY_BUDGET, ...options.retryBudget };
  if (budget !== false) {
    if (!(budget.ratio >= 0 && budget.ratio <= 1)) fail('retryBudget.ratio must be between 0 and 1');
    count('retryBudget.reserve', budget.reserve, 0);
  }
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  count('backoff.baseMs', backoff.baseMs, 0);
  count('backoff.capMs', backoff.capMs, 0);
  const retryOn = options.retryOn ?? [429, 503];
  for (const status of retryOn)
    if (!Number.isInteger(status) || status < 400 || status > 599)
      fail('retryOn holds HTTP error statuses (400-599)');
  const attemptHeader = options.attemptHeader ?? false;
  if (attemptHeader !== false && !HEADER_NAME.test(attemptHeader))
    fail('attemptHeader must be a header name');
  const retryHeader = options.retryHeader ?? DEFAULT_RETRY_HEADER;
  if (retryHeader !== false && (typeof retryHeader !== 'string' || !HEADER_NAME.test(retryHeader)))
    fail('retryHeader must be a header name or false');
  const resolved: ResolvedClientOptions = {
    fetch: base,
    maxAttempts: whole('maxAttempts', options.maxAttempts ?? 3, 1),
    maxWaitMs: count('maxWaitMs', options.maxWaitMs ?? 60_000, 0),
    jitterMs: count('jitterMs', options.jitterMs ?? 1000, 0),
    retryOn: new Set(retryOn),
    backoff,
    retryBudget: budget,
    pacing: options.pacing ?? true,
    estimate: options.estimate,
    graphql: options.graphql ?? false,
    idempotencyKey: idempotencyKeyMaker(options.idempotencyKey ?? false),
    attemptHeader,
    retryHeader,
    events: options.events ?? {},
    maxOrigins: count('maxOrigins', options.maxOrigins ?? 1000, 1),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? sleep,
    random: options.random ?? Math.random,
    maxDifficulty,
  };
  for (const name of ['now', 'sleep', 'random'] as const) fn(name, resolved[name]);
  if (resolved.estimate !== undefined) fn('estimate', resolved.estimate);
  if (typeof resolved.pacing !== 'boolean') fail('pacing must be true or false');
  if (typeof resolved.graphql !== 'boolean') fail('graphql must be true or false');
  return resolved;
}

function idempotencyKeyMaker(option: boolean | (() => string)): false | (() => string) {
  if (option === false) return false;
  if (option === true) return () => globalThis.crypto.randomUUID();
  fn('idempotencyKey', option);
  return option;
}

function whole(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) fail(`${name} must be a whole number >= ${min}`);
  return value;
}

function count(name: string, value: number, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    fail(`${name} must be a number >= ${min}`);
  return value;
}

function fn(name: string, value: unknown): void {
  if (typeof value !== 'function') fail(`${name} must be a function`);
}

function fail(message: string): never {
  throw new ClientConfigError(`@sluice/client: ${message}`);
}

import { FirstAnswer } from './firstAnswer.js';
import { type BudgetReading, TokenBudget } from './tokenBudget.js';

/** `extensions.cost.throttleStatus` as Shopify writes it (and @sluice/graphql): a client's budget of cost points. */
export interface ThrottleStatus {
  readonly maximumAvailable: number;
  readonly currentlyAvailable: number;
  /** Points restored a second. */
  readonly restoreRate: number;
}

/** What the body of a GraphQL answer said of its cost; the fields it did not carry are undefined. */
export interface GraphqlAnswer {
  /** `requestedQueryCost`, the server's estimate made before execution; a batch's summed. */
  readonly requested: number | undefined;
  /** The budget once the call was counted: the last throttle status of the answer. */
  readonly status: ThrottleStatus | undefined;
  /** Every operation was refused THROTTLED before execution (no data): the call may be sent again as it is. */
  readonly throttled: boolean;
  /**
   * The wait the THROTTLED errors asked for (`extensions.retryAfterMs`, the longest), ms; infinite when one
   * says `retryAfterMs: null`: the operation costs more than the budget can ever hold.
   */
  readonly retryAfterMs: number | undefined;
}

/** What the client keeps of one query text at one endpoint. */
export interface QueryCost {
  /** Its last `requestedQueryCost`; undefined until an answer said it. */
  cost: number | undefined;
  /** Its first call goes alone while its cost is unknown; the others wait for that answer. */
  readonly first: FirstAnswer;
}

/** Endpoints remembered per origin, and query texts per endpoint; the least recently used forgotten first. */
const MAX_ENDPOINTS = 100;
const MAX_QUERIES = 1000;

/**
 * One GraphQL endpoint of an origin: its budget of cost points, as the last answers' throttle status said
 * (restored at its restore rate since, less the guesses of the calls in flight), and what each query text
 * cost the last time.
 */
export class GraphqlEndpoint {
  readonly budget = new TokenBudget();
  readonly #queries = new Map<string, QueryCost>();

  /** What the client knows of `key` (a query text), made on first use. */
  query(key: string): QueryCost {
    return recent(this.#queries, key, MAX_QUERIES, () => ({ cost: undefined, first: new FirstAnswer() }));
  }

  /** The answer to budget reservation `seq`, a call of `query`, came: the budget and the query's cost learn it. */
  observe(seq: number, query: QueryCost | undefined, answer: GraphqlAnswer | undefined, now: number): void {
    this.budget.observe(seq, answer?.status && reading(answer.status), now);
    if (query !== undefined && answer?.requested !== undefined) query.cost = answer.requested;
  }
}

/** An origin's GraphQL endpoints, by path. */
export class GraphqlCosts {
  readonly #endpoints = new Map<string, GraphqlEndpoint>();

  /** The endpoint at `path`, made on first use. */
  endpoint(path: string): GraphqlEndpoint {
    return recent(this.#endpoints, path, MAX_ENDPOINTS, () => new GraphqlEndpoint());
  }
}

/** A throttle status as the budget reads it: the refill rate named, the time until whole from it. */
function reading(status: ThrottleStatus): BudgetReading {
  const { maximumAvailable: limit, restoreRate } = status;
  const remaining = Math.min(limit, status.currentlyAvailable);
  const ratePerMs = restoreRate / 1000;
  return { limit, remaining, resetMs: ratePerMs > 0 ? (limit - remaining) / ratePerMs : 0, ratePerMs };
}

/** `map`'s entry for `key`, made by `make` when absent, now the newest; the oldest dropped past `max`. */
function recent<V>(map: Map<string, V>, key: string, max: number, make: () => V): V {
  const value = map.get(key) ?? make();
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
  return value;
}

/**
 * What a GraphQL answer's body (parsed JSON: one result, or a batch's array) says of its cost; undefined
 * when it is no GraphQL result. A THROTTLED result with data was executed in part: not a refusal.
 */
export function readGraphqlAnswer(body: unknown): GraphqlAnswer | undefined {
  const results = Array.isArray(body) ? body : [body];
  if (results.length === 0 || !results.every(isResult)) return undefined;
  let requested: number | undefined;
  let status: ThrottleStatus | undefined;
  let retryAfterMs: number | undefined;
  let refused = 0;
  for (const result of results) {
    const throttled = throttledError(result.errors);
    // Where a server writes no top-level extensions on an error (Mercurius), the cost is the error's.
    const cost = field(result.extensions, 'cost') ?? field(throttled, 'cost');
    const asked = points(field(cost, 'requestedQueryCost'));
    if (asked !== undefined) requested = (requested ?? 0) + asked;
    status = throttleStatus(field(cost, 'throttleStatus')) ?? status;
    if (throttled === undefined || (result.data !== undefined && result.data !== null)) continue;
    refused += 1;
    const said = field(throttled, 'retryAfterMs');
    const wait = said === null ? Number.POSITIVE_INFINITY : points(said);
    if (wait !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, wait);
  }
  return { requested, status, throttled: refused === results.length, retryAfterMs };
}

/**
 * The wait before a THROTTLED call is sent again: what its error asked for, else the time the throttle
 * status says the requested cost takes to be restored (as Shopify's clients reckon it); undefined if neither.
 */
export function throttledWaitMs(answer: GraphqlAnswer): number | undefined {
  if (answer.retryAfterMs !== undefined) return answer.retryAfterMs;
  const { status, requested } = answer;
  if (status === undefined || requested === undefined || !(status.restoreRate > 0)) return undefined;
  return (Math.max(0, requested - status.currentlyAvailable) / status.restoreRate) * 1000;
}

type Result = { readonly data?: unknown; readonly errors?: unknown; readonly extensions?: unknown };

/** A GraphQL result: an object with data, errors or extensions. */
function isResult(value: unknown): value is Result {
  return isObject(value) && ('data' in value || 'errors' in value || 'extensions' in value);
}

/** The extensions of the first error whose `extensions.code` is THROTTLED. */
function throttledError(errors: unknown): object | undefined {
  if (!Array.isArray(errors)) return undefined;
  for (const error of errors) {
    const extensions = field(error, 'extensions');
    if (field(extensions, 'code') === 'THROTTLED') return extensions as object;
  }
  return undefined;
}

function throttleStatus(value: unknown): ThrottleStatus | undefined {
  const maximumAvailable = points(field(value, 'maximumAvailable'));
  const currentlyAvailable = field(value, 'currentlyAvailable');
  const restoreRate = points(field(value, 'restoreRate'));
  // Available may be below zero on a server that lets a settled call leave a debt.
  if (maximumAvailable === undefined || restoreRate === undefined) return undefined;
  if (typeof currentlyAvailable !== 'number' || !Number.isFinite(currentlyAvailable)) return undefined;
  return { maximumAvailable, currentlyAvailable, restoreRate };
}

/** A number of points (or ms) >= 0, or undefined. */
function points(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function field(value: unknown, name: string): unknown {
  return isObject(value) ? (value as Record<string, unknown>)[name] : undefined;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

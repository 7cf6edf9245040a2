import type { Decision, DeniedResponse, Lease, RuleResult } from '@sluice/core';
import { GraphQLError } from 'graphql';

/*
 * What GraphQL responses carry: `extensions.cost` in Shopify's shape (the requested and actual cost, and a
 * throttle status of the budget's rule), and the GraphQL error of an operation the limiter refused.
 */

/** The budget's rule as Shopify's `throttleStatus` shows it. */
export interface ThrottleStatus {
  /** Points the budget holds when full (a bucket's `burst`, else the rule's limit). */
  readonly maximumAvailable: number;
  /** Points left now, after this operation's settle when it was settled. */
  readonly currentlyAvailable: number;
  /** Points the budget regains per second (the rule's `requests` over its `per`; 0 for a calendar quota). */
  readonly restoreRate: number;
}

/** `extensions.cost` of one operation's response. */
export interface QueryCost {
  /** The estimate charged at admission. */
  readonly requestedQueryCost: number;
  /** The cost of what execution returned; null when the operation did not run. */
  readonly actualQueryCost: number | null;
  /** The budget rule's state; absent when no rule with `settle` applied. */
  readonly throttleStatus?: ThrottleStatus;
}

/** `extensions.cost`: its throttle status only when a budget rule applied. */
export function queryCost(
  requested: number,
  actual: number | null,
  throttleStatus: ThrottleStatus | undefined,
): QueryCost {
  return throttleStatus === undefined
    ? { requestedQueryCost: requested, actualQueryCost: actual }
    : { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus };
}

/**
 * A response's `extensions` with `cost` added (a copy: the server's object is left as it was). Copied with
 * Object.assign, not a spread: V8 gives an object spread into a literal a map no transition leads from, and
 * each property added after it then costs a new map (about a microsecond).
 */
export function withCost(
  extensions: Readonly<Record<string, unknown>> | undefined,
  cost: QueryCost,
): Record<string, unknown> {
  if (extensions === undefined || extensions === null) return { cost };
  const merged: Record<string, unknown> = Object.assign({}, extensions);
  merged.cost = cost;
  return merged;
}

/** The `extensions.code` of a refused operation, by the status core gives its denial. */
const DENIED_CODES = { 429: 'THROTTLED', 503: 'RATE_LIMIT_UNAVAILABLE', 403: 'FORBIDDEN' } as const;

/** The code of an operation whose estimate is above `maxCost` (Apollo Router's name for it). */
export const TOO_EXPENSIVE = 'COST_ESTIMATED_TOO_EXPENSIVE';

/** The HTTP status of a denied operation: 200 when so configured, else core's (429, 503 or 403). */
export function deniedStatus(denied: DeniedResponse, throttledStatus: 429 | 200): number {
  return throttledStatus === 200 ? 200 : denied.status;
}

/**
 * The GraphQL error of a denied operation: `THROTTLED` (429) with the rule and the retry time in seconds (as
 * Retry-After says it) and in milliseconds (the limiter's exact wait; null when the operation can never fit),
 * `RATE_LIMIT_UNAVAILABLE` (503: the store is down and the rule fails closed) or `FORBIDDEN` (403: a deny rule).
 */
export function deniedError(denied: DeniedResponse): GraphQLError {
  const code = DENIED_CODES[denied.status];
  const { rule, retryAfter } = denied.body;
  const exact = denied.decision.retryAfterMs;
  const retryAfterMs = retryAfter === null || !Number.isFinite(exact) ? null : Math.ceil(exact);
  return new GraphQLError(deniedMessage(denied), {
    extensions: { code, rule, retryAfter, retryAfterMs },
  });
}

function deniedMessage(denied: DeniedResponse): string {
  const rule = denied.body.rule === null ? '' : ` (rule ${denied.body.rule})`;
  if (denied.status === 403) return `Forbidden${rule}`;
  if (denied.status === 503) return `Rate limit unavailable${rule}: retry later`;
  const { retryAfter } = denied.body;
  return retryAfter === null
    ? `Throttled${rule}: the operation costs more than the budget can ever hold`
    : `Throttled${rule}: retry in ${retryAfter} s`;
}

/** The error of an operation whose estimate is above the maximum per operation: refused, never charged. */
export function tooExpensive(cost: number, maxCost: number): GraphQLError {
  return new GraphQLError(
    `The operation's estimated cost ${cost} is above the maximum of ${maxCost} per operation`,
    { extensions: { code: TOO_EXPENSIVE, cost, maxCost } },
  );
}

/** A rule's rate parameters, as its reservation carries them. */
type RateParams = NonNullable<Lease['refund']>['params'];

/** Most rules whose parameters are remembered; rules are few, this only bounds a table renamed at will. */
const MAX_RULES = 1000;

/**
 * The throttle status of decisions: the parameters of each budget rule, read from the reservations its
 * admissions hold (a denied decision holds none: the rule's parameters seen last are used then).
 */
export class ThrottleStatuses {
  readonly #params = new Map<string, RateParams>();

  /**
   * The status of the decision's budget rule (the denying one, else the most constrained rule with `settle`),
   * `returned` points given back since the decision (negative: charged on top); undefined when none applied.
   */
  of(decision: Decision, returned = 0): ThrottleStatus | undefined {
    const result = budgetResult(decision);
    if (result === undefined) return undefined;
    const params = this.#paramsOf(decision, result);
    const maximumAvailable = params.burst;
    const left = Math.floor(result.remaining + returned);
    const rate = params.windowMs > 0 ? (params.limit * 1000) / params.windowMs : 0;
    return {
      maximumAvailable,
      currentlyAvailable: Math.min(Math.max(left, 0), maximumAvailable),
      restoreRate: Math.round(rate * 1000) / 1000,
    };
  }

  #paramsOf(decision: Decision, result: RuleResult): RateParams {
    const params = reservedParams(decision, result.rule);
    if (params !== undefined) {
      const known = this.#params.get(result.rule);
      if (known === params) return params;
      if (known === undefined && this.#params.size >= MAX_RULES) this.#params.clear();
      this.#params.set(result.rule, params);
      return params;
    }
    return (
      this.#params.get(result.rule) ?? { limit: result.limit, windowMs: result.windowMs, burst: result.limit }
    );
  }
}

/** The parameters of the rule's reservation in the decision, when it holds one. */
function reservedParams(decision: Decision, rule: string): RateParams | undefined {
  for (const lease of decision.leases)
    if (lease.reserved === true && lease.rule === rule) return lease.refund?.params;
  return undefined;
}

/** The result a throttle status shows: the denying rule when it settles, else the most constrained one that does. */
function budgetResult(decision: Decision): RuleResult | undefined {
  let best: RuleResult | undefined;
  for (const result of decision.results) {
    if (result.settles !== true || result.mode !== 'enforce') continue;
    if (!decision.allowed && result.rule === decision.rule) return result;
    if (best === undefined || roomOf(result) < roomOf(best)) best = result;
  }
  return best;
}

const roomOf = (result: RuleResult): number => (result.limit > 0 ? result.remaining / result.limit : 0);

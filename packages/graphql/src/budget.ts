import type { Decision, DeniedResponse } from '@sluice/core';
import type { HeaderValues } from '@sluice/core/http';
import type { GraphQLError } from 'graphql';
import type { CostEstimate, CostEstimator, GraphqlRequest } from './cost/index.js';
import { type Descriptors, operationDescriptors } from './descriptors.js';
import {
  deniedError,
  deniedStatus,
  type QueryCost,
  queryCost,
  type ThrottleStatuses,
  tooExpensive,
} from './responses.js';

/*
 * Reserve then settle, for GraphQL. An operation is priced before execution (the estimator's cost, refused
 * above `maxCost` or when it cannot execute: never charged); the operations decided together (one, or a whole
 * batch) form a unit admitted on the sum of their estimates in one decision; each admitted operation reports
 * the actual cost of what it returned, and once every one of the unit has, the unit settles to their sum
 * (limiter.settle: given back, or charged on top and owed).
 */

/** What pricing reads: the estimator and the maximum per operation. */
export interface Pricing {
  readonly estimator: CostEstimator;
  readonly maxCost: number | undefined;
}

/** One operation, priced: its estimate and descriptors, or the errors it is refused with (never charged). */
export type Priced =
  | {
      readonly ok: true;
      readonly estimate: CostEstimate;
      readonly variables: GraphqlRequest['variables'];
      readonly descriptors: Descriptors;
    }
  | { readonly ok: false; readonly errors: readonly GraphQLError[] };

/** Prices one operation; the estimator's refusals (bad documents, variables, bounds) and `maxCost` refuse it. */
export function price(pricing: Pricing, request: GraphqlRequest): Priced {
  const estimate = pricing.estimator.estimate(request);
  if (!estimate.ok) return { ok: false, errors: estimate.errors };
  const { maxCost } = pricing;
  if (maxCost !== undefined && estimate.cost > maxCost)
    return { ok: false, errors: [tooExpensive(estimate.cost, maxCost)] };
  return { ok: true, estimate, variables: request.variables, descriptors: operationDescriptors(estimate) };
}

/** A unit's decision: admitted (with the RateLimit fields to send and its settle), or denied. */
export type Admission =
  | {
      readonly allowed: true;
      /** Undefined when nothing decided (no limiter reached the request): no budget to show or settle. */
      readonly decision: Decision | undefined;
      readonly headers: HeaderValues;
      readonly settle: (actual: number) => Promise<unknown>;
    }
  | { readonly allowed: false; readonly denied: DeniedResponse };

/** What the server does with one operation. */
export type Gate =
  | { readonly kind: 'refused'; readonly errors: readonly GraphQLError[] }
  | {
      readonly kind: 'denied';
      readonly error: GraphQLError;
      readonly status: number;
      readonly headers: HeaderValues;
      readonly cost: QueryCost | undefined;
    }
  | { readonly kind: 'admitted'; readonly headers: HeaderValues; readonly ticket: Ticket };

/** What a unit's gates read of the budget's settings. */
export interface UnitSettings {
  readonly estimator: CostEstimator;
  readonly throttledStatus: 429 | 200;
  readonly extensions: boolean;
  readonly statuses: ThrottleStatuses;
}

/** An admitted operation: `finish` reports what it returned and answers its `extensions.cost`. */
export interface Ticket {
  finish(data: unknown): Promise<QueryCost | undefined>;
}

/** Operations decided together, settled together once each has reported its actual cost. */
export class Unit {
  readonly #settings: UnitSettings;
  readonly #ops: readonly Priced[];
  readonly #expected: number;
  #admission: Promise<Admission> | undefined;
  readonly #admit: () => Promise<Admission>;
  #reported = 0;
  #actual = 0;
  #returned = 0;

  /** `admit` runs once, when the first operation passes its gate; `ops` are all the unit's operations. */
  constructor(settings: UnitSettings, ops: readonly Priced[], admit: () => Promise<Admission>) {
    this.#settings = settings;
    this.#ops = ops;
    this.#expected = ops.filter((op) => op.ok).length;
    this.#admit = admit;
  }

  /** Whether the unit's operation at `index` was priced (and so is in its decision). */
  has(index: number): boolean {
    return this.#ops[index]?.ok === true;
  }

  /** The gate of one of the unit's operations, priced. */
  async gate(priced: Priced): Promise<Gate> {
    if (!priced.ok) return { kind: 'refused', errors: priced.errors };
    this.#admission ??= this.#admit();
    const admission = await this.#admission;
    if (!admission.allowed) return this.#denied(admission.denied, priced.estimate.cost);
    return { kind: 'admitted', headers: admission.headers, ticket: this.#ticket(admission, priced) };
  }

  #denied(denied: DeniedResponse, requested: number): Gate {
    const { throttledStatus, extensions, statuses } = this.#settings;
    const throttleStatus = statuses.of(denied.decision);
    const cost = extensions ? queryCost(requested, null, throttleStatus) : undefined;
    return {
      kind: 'denied',
      error: deniedError(denied),
      status: deniedStatus(denied, throttledStatus),
      headers: denied.headers,
      cost,
    };
  }

  #ticket(admission: Extract<Admission, { allowed: true }>, priced: Extract<Priced, { ok: true }>): Ticket {
    let done = false;
    return {
      finish: async (data) => {
        if (done) return undefined;
        done = true;
        const actual = this.#actualOf(priced, data);
        this.#reported += 1;
        this.#actual += actual;
        this.#returned += priced.estimate.cost - actual;
        // The last operation of the unit settles it, and its response waits for the settle: the next
        // request of the client sees the budget as settled.
        // A settle that fails is the limiter's to report (its store's resilience): the response goes on.
        if (this.#reported === this.#expected) await admission.settle(this.#actual).catch(() => undefined);
        if (!this.#settings.extensions) return undefined;
        const { decision } = admission;
        const throttleStatus =
          decision === undefined ? undefined : this.#settings.statuses.of(decision, this.#returned);
        return queryCost(priced.estimate.cost, actual, throttleStatus);
      },
    };
  }

  /** The actual cost of what the operation returned; its estimate when the result cannot be priced. */
  #actualOf(priced: Extract<Priced, { ok: true }>, data: unknown): number {
    try {
      const actual = this.#settings.estimator.actual(priced.estimate, priced.variables, data);
      return Number.isFinite(actual) && actual >= 0 ? Math.ceil(actual) : priced.estimate.cost;
    } catch {
      return priced.estimate.cost;
    }
  }
}

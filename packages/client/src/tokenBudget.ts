import type { ModelBudget } from './modelFields.js';

/** What the client believes of the budget: tokens left at `at` (not counting requests in flight). */
interface Known {
  readonly limit: number;
  readonly remaining: number;
  readonly at: number;
  /** Tokens a ms, as the server's last answer said: what was missing over the time until whole. */
  readonly rate: number;
}

/** What an answer says of a budget; `ratePerMs` when the server names its refill rate (a GraphQL throttle status). */
export interface BudgetReading extends ModelBudget {
  readonly ratePerMs?: number;
}

/** Requests in flight remembered at most (answers that never come would leave them for ever). */
const MAX_IN_FLIGHT = 10_000;

/**
 * A model API's token budget as the client sees it: what is left, refilled at the rate that makes it whole
 * by its reset (model APIs refill continuously), less the estimates of requests in flight, which the server
 * may not have counted yet. A request takes its estimate before it is sent.
 *
 * An answer in order (to a request sent after every request answered so far) sets what the server says,
 * tokens settled back included. Concurrent requests reach the server in any order, so an answer that
 * comes after the answer to a later request may leave that request out: it sets the lower of what it says
 * and what the client believed less the answered request's estimate.
 */
export class TokenBudget {
  #known: Known | undefined;
  #seq = 0;
  /** The highest reservation number answered so far. */
  #answered = 0;
  readonly #inFlight = new Map<number, number>();

  /** Ms until `cost` tokens are there; 0 when they are, when nothing is known, or when `cost` never fits. */
  waitFor(cost: number, now: number): number {
    const known = this.#known;
    if (known === undefined || cost > known.limit) return 0;
    const missing = cost - (this.#level(known, now) - this.#pending());
    if (missing <= 0) return 0;
    // Nothing says how fast it refills: the request goes, and the server's answer says what to do.
    return known.rate > 0 ? Math.ceil(missing / known.rate) : 0;
  }

  /** Takes `cost` tokens for a request about to be sent; answers its reservation number. */
  take(cost: number): number {
    this.#seq += 1;
    this.#inFlight.set(this.#seq, cost);
    if (this.#inFlight.size > MAX_IN_FLIGHT) this.#inFlight.delete(this.#inFlight.keys().next().value!);
    return this.#seq;
  }

  /** The answer to reservation `seq` came (`budget`: what its fields said), or the request failed (undefined). */
  observe(seq: number, budget: BudgetReading | undefined, now: number): void {
    const cost = this.#inFlight.get(seq) ?? 0;
    this.#inFlight.delete(seq);
    if (budget === undefined) return;
    const inOrder = seq > this.#answered || this.#known === undefined;
    this.#answered = Math.max(this.#answered, seq);
    const believed = inOrder ? budget.remaining : this.#level(this.#known!, now) - cost;
    const missing = budget.limit - budget.remaining;
    this.#known = {
      limit: budget.limit,
      // Below zero only as the server said it (a GraphQL budget in debt); the belief itself stops at zero.
      remaining: Math.min(budget.remaining, Math.max(0, believed)),
      at: now,
      rate:
        budget.ratePerMs ??
        (missing > 0 && budget.resetMs > 0 ? missing / budget.resetMs : (this.#known?.rate ?? 0)),
    };
  }

  /** What is left at `now`, requests in flight not counted. */
  #level(known: Known, now: number): number {
    return Math.min(known.limit, known.remaining + known.rate * Math.max(0, now - known.at));
  }

  #pending(): number {
    let pending = 0;
    for (const cost of this.#inFlight.values()) pending += cost;
    return pending;
  }
}

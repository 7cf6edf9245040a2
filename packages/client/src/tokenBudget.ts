import type { ModelBudget } from './modelFields.js';

/** Requests sent since the last answer with the fields, remembered at most. */
const MAX_PENDING = 10_000;

/** The last budget a response reported, and when. */
interface Known extends ModelBudget {
  readonly at: number;
  /** Reservation number of the request whose response said it. */
  readonly seq: number;
}

/**
 * A model API's token budget as the client sees it: what the last response said is left, refilled at the
 * rate that makes it whole by its reset (model APIs refill continuously), less the estimates of requests
 * sent since, which the server may not have counted yet. A request takes its estimate before it is sent.
 */
export class TokenBudget {
  #known: Known | undefined;
  #seq = 0;
  /** Estimates of requests sent after the one `#known` came from, by reservation number. */
  readonly #since = new Map<number, number>();

  /** Ms until `cost` tokens are there; 0 when they are, when nothing is known, or when `cost` never fits. */
  waitFor(cost: number, now: number): number {
    const known = this.#known;
    if (known === undefined || cost > known.limit) return 0;
    const missing = cost - this.#available(known, now);
    if (missing <= 0) return 0;
    const rate = refillRate(known);
    // Nothing says how fast it refills: the request goes, and the server's answer says what to do.
    return rate > 0 ? Math.ceil(missing / rate) : 0;
  }

  /** Takes `cost` tokens for a request about to be sent; answers its reservation number. */
  take(cost: number): number {
    this.#seq += 1;
    if (this.#known !== undefined && cost > 0) this.#since.set(this.#seq, cost);
    // Answers without the fields would leave these for ever: the oldest go first.
    if (this.#since.size > MAX_PENDING) this.#since.delete(this.#since.keys().next().value!);
    return this.#seq;
  }

  /** Applies what the response to reservation `seq` said; an answer older than the one applied is ignored. */
  observe(seq: number, budget: ModelBudget | undefined, now: number): void {
    if (budget === undefined || (this.#known !== undefined && seq < this.#known.seq)) return;
    this.#known = { ...budget, at: now, seq };
    for (const taken of this.#since.keys()) if (taken <= seq) this.#since.delete(taken);
  }

  #available(known: Known, now: number): number {
    const refilled = Math.min(known.limit, known.remaining + refillRate(known) * Math.max(0, now - known.at));
    let pending = 0;
    for (const cost of this.#since.values()) pending += cost;
    return refilled - pending;
  }
}

/** Tokens a ms: what is missing, over the time until the budget is whole. */
function refillRate(known: ModelBudget): number {
  const missing = known.limit - known.remaining;
  return missing > 0 && known.resetMs > 0 ? missing / known.resetMs : 0;
}

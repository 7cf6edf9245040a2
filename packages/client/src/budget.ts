/** Retry budget settings: retries stay under `ratio` of requests, plus a `reserve` for quiet clients. */
export interface RetryBudgetOptions {
  /** Retries earned per request sent: 0.1 lets retries add at most 10% to the load. Default 0.1. */
  readonly ratio?: number;
  /** Retries allowed before any were earned, and the most that can be saved up. Default 10. */
  readonly reserve?: number;
}

/** Defaults: retries at most 10% of requests, beyond a reserve of 10. */
export const DEFAULT_RETRY_BUDGET: Required<RetryBudgetOptions> = { ratio: 0.1, reserve: 10 };

/** Float error of summed ratios (ten times 0.1 is below 1): within it, a retry counts as earned. */
const EPSILON = 1e-9;

/**
 * A token bucket of retries for one origin: each request earns `ratio` of a retry, each retry spends one,
 * and the bucket holds at most `reserve`. During an outage every request fails, so retries add at most
 * `ratio` to the load once the reserve is spent, instead of multiplying it by the number of attempts.
 */
export class RetryBudget {
  readonly #ratio: number;
  readonly #reserve: number;
  #tokens: number;

  constructor(options: Required<RetryBudgetOptions>) {
    this.#ratio = options.ratio;
    this.#reserve = options.reserve;
    this.#tokens = options.reserve;
  }

  /** Retries that may be made now (fractions are earned, not yet spendable). */
  get available(): number {
    return Math.floor(this.#tokens + EPSILON);
  }

  /** A request (not a retry) was sent. */
  earn(): void {
    this.#tokens = Math.min(this.#reserve, this.#tokens + this.#ratio);
  }

  /** Takes one retry; false when the budget is spent. */
  spend(): boolean {
    if (this.#tokens + EPSILON < 1) return false;
    this.#tokens = Math.max(0, this.#tokens - 1);
    return true;
  }
}

/** Breaker settings: open after `failures` consecutive failures, for `cooldownMs`. */
export interface BreakerOptions {
  readonly failures: number;
  readonly cooldownMs: number;
}

/** Defaults: five failures in a row open the breaker for one second. */
export const DEFAULT_BREAKER: BreakerOptions = { failures: 5, cooldownMs: 1000 };

/**
 * A circuit breaker over store calls, driven by the caller's `now`. Closed: every call goes through.
 * After `failures` consecutive failures it opens: calls are refused at once for `cooldownMs`. Then one
 * probe call goes through (half-open); its success closes the breaker, its failure reopens it.
 */
export class Breaker {
  readonly #options: BreakerOptions;
  #consecutive = 0;
  #openedAt = Number.NEGATIVE_INFINITY;
  #probing = false;

  constructor(options: BreakerOptions) {
    this.#options = options;
  }

  /** True while calls are being refused. */
  get open(): boolean {
    return this.#consecutive >= this.#options.failures;
  }

  /** `closed`, `open` (refusing calls), or `half_open` while one probe call is out. */
  get state(): 'closed' | 'open' | 'half_open' {
    if (!this.open) return 'closed';
    return this.#probing ? 'half_open' : 'open';
  }

  /** Whether a call may go to the store now; in half-open state, admits only one probe at a time. */
  admit(now: number): boolean {
    if (!this.open) return true;
    // A clock that stepped back (now < openedAt) must not keep the breaker open for the size of the step.
    const coolingDown = now >= this.#openedAt && now < this.#openedAt + this.#options.cooldownMs;
    if (coolingDown || this.#probing) return false;
    this.#probing = true;
    return true;
  }

  /**
   * The store's connection came (back) up: an open breaker lets the next call through as a probe now, rather
   * than at the end of its cool-down, so counting resumes as soon as the store can answer.
   */
  probeNow(): void {
    if (this.open && !this.#probing) this.#openedAt = Number.NEGATIVE_INFINITY;
  }

  succeeded(): void {
    this.#consecutive = 0;
    this.#probing = false;
  }

  failed(now: number): void {
    this.#consecutive += 1;
    this.#probing = false;
    if (this.open) this.#openedAt = now;
  }
}

/**
 * The exact sliding log of one key, as core's `sliding_log` counts it (entries with `now - at < window`), kept
 * as a queue with a running sum so that judging a request costs O(1) amortised at any limit: replay judges
 * every request of a hot key against it.
 */
export class ExactWindow {
  readonly #windowMs: number;
  #at: number[] = [];
  #cost: number[] = [];
  #head = 0;
  #sum = 0;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Units counted in the window ending at `now`. */
  used(now: number): number {
    const at = this.#at;
    while (this.#head < at.length && now - (at[this.#head] ?? 0) >= this.#windowMs) {
      this.#sum -= this.#cost[this.#head] ?? 0;
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > at.length) this.#compact();
    return this.#sum;
  }

  /** Logs an admitted request; times must not go back (replay feeds logs in time order). */
  add(now: number, cost: number): void {
    this.#at.push(now);
    this.#cost.push(cost);
    this.#sum += cost;
  }

  /** Drops the entries already out of the window, so the arrays hold about one window. */
  #compact(): void {
    this.#at = this.#at.slice(this.#head);
    this.#cost = this.#cost.slice(this.#head);
    this.#head = 0;
  }
}

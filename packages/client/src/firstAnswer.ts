import { whileNotAborted } from './time.js';

/**
 * Holds an origin's requests back until its first answer: before it, nothing says how fast the origin
 * lets a client go, and a burst sent blind to a fresh origin is how a client meets its first 429. The
 * first request goes alone; the others go once its response headers are in. A probe that fails (a
 * network error, an abort) hands the turn to the next request.
 */
export class FirstAnswer {
  #answered = false;
  #probe: Promise<void> | undefined;
  #release: (() => void) | undefined;

  /** Waits for the request's turn; true when it is the probe and must call {@link settle}. */
  async turn(signal: AbortSignal | undefined): Promise<boolean> {
    while (!this.#answered && this.#probe !== undefined) await whileNotAborted(this.#probe, signal);
    if (this.#answered) return false;
    this.#probe = new Promise<void>((resolve) => {
      this.#release = resolve;
    });
    return true;
  }

  /** The probe is over: answered (headers in), or failed. */
  settle(answered: boolean): void {
    this.#answered ||= answered;
    this.#probe = undefined;
    this.#release?.();
    this.#release = undefined;
  }
}

/**
 * How long a remote store call may take. A store that keeps answering (late answers included) is only busy:
 * its calls get `ceilingMs`, so a saturated machine waits instead of failing open (InFlight gives up sooner
 * the calls of a store that stopped answering altogether: see Progress). Once a call is given up unanswered,
 * the store is suspected hung: calls get `floorMs` until any answer comes back, so an outage fails fast after
 * the first wait. `ceilingMs` equal to `floorMs`: a fixed limit.
 */
export class TimeLimit {
  readonly floorMs: number;
  readonly ceilingMs: number;
  /** A call was given up unanswered, and nothing has answered since. */
  #suspect = false;

  constructor(floorMs: number, ceilingMs = floorMs) {
    this.floorMs = floorMs;
    this.ceilingMs = Math.max(floorMs, ceilingMs);
  }

  /** The limit of a call sent now, ms. */
  get ms(): number {
    return this.#suspect ? this.floorMs : this.ceilingMs;
  }

  /** True when the limit can move (a ceiling above the floor). */
  get adaptive(): boolean {
    return this.ceilingMs > this.floorMs;
  }

  /** True while the store is suspected hung (its calls get the floor). */
  get suspect(): boolean {
    return this.#suspect;
  }

  /** A call was answered (or refused by the store: it is alive), on time or late. */
  answered(): void {
    this.#suspect = false;
  }

  /** A call was given up unanswered (its limit passed, or the store stalled). */
  timedOut(): void {
    if (this.adaptive) this.#suspect = true;
  }
}

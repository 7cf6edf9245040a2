/**
 * How long a remote store call may take: `floorMs` while the store answers quickly, stretched to
 * `multiplier` times the slowest recent answer (that peak halving every `halfLifeMs`), at most `ceilingMs`.
 * Only answers move it, late ones included: a busy store that keeps answering raises the limit, so its
 * requests wait instead of failing open; a store that stops answering (a hang, a dead link) leaves the limit
 * where the last answers put it, so an outage still fails within it. It starts at the floor: a store never
 * seen to answer slowly gets the short limit. `ceilingMs` equal to `floorMs`: a fixed limit.
 */
export class TimeLimit {
  readonly floorMs: number;
  readonly ceilingMs: number;
  #peakMs = 0;
  #peakAt = 0;
  #currentMs: number;

  constructor(floorMs: number, ceilingMs = floorMs) {
    this.floorMs = floorMs;
    this.ceilingMs = Math.max(floorMs, ceilingMs);
    this.#currentMs = floorMs;
  }

  /** The limit now, ms. */
  get ms(): number {
    return this.#currentMs;
  }

  /** True when the limit can move (a ceiling above the floor). */
  get adaptive(): boolean {
    return this.ceilingMs > this.floorMs;
  }

  /** An answer took `tookMs`, received at `at` (ms, any monotonic clock). */
  observe(tookMs: number, at: number): void {
    const decayed = this.#peakMs * 0.5 ** ((at - this.#peakAt) / HALF_LIFE_MS);
    this.#peakMs = tookMs > decayed ? tookMs : decayed;
    this.#peakAt = at;
    const wanted = Math.ceil(MULTIPLIER * this.#peakMs);
    this.#currentMs =
      wanted < this.floorMs ? this.floorMs : wanted > this.ceilingMs ? this.ceilingMs : wanted;
  }
}

/** The limit is this many times the slowest recent answer: room for a burst above what was seen. */
export const MULTIPLIER = 4;

/**
 * The recent peak halves every 30 s: on a saturated machine stalls recur every few seconds, and a limit that
 * forgot the last one between them failed open on the next (5 s did, in issue 24's bench runs); a store quick
 * again is back at the floor within about two minutes, and meanwhile a hang still fails within the ceiling.
 */
export const HALF_LIFE_MS = 30_000;

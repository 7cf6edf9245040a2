/**
 * Default time a store may owe answers without giving any, ms, before its waiting calls are given up, while it
 * has shown no longer gaps: a hung store that was answering briskly costs a request about this long, under the
 * 300 ms no request should wait on a hung store.
 */
export const DEFAULT_STALL_MS = 200;

/**
 * The most a store's own pace can raise that allowance to, ms. A busy store answers in bursts: a Redis blocked
 * 150 ms at a time answers every 150-170 ms on a quiet machine, but a loaded machine adds its own delays (gaps of
 * 212 ms at load 3.5 on 2 CPUs, up to 336 ms at load 10). The allowance is twice the longest gap the store lately
 * answered after (fading by half every 5 s), up to this cap: still under the 300 ms a hung store may cost.
 */
export const DEFAULT_STALL_CAP_MS = 280;

/** The allowance is this many times the longest gap the store answered after. */
const GAP_FACTOR = 2;
/** A gap seen counts half as much after this long, ms. */
const GAP_HALF_LIFE_MS = 5000;

/**
 * Tells a busy store from a hung one by progress. A busy store keeps answering: some call comes back every
 * now and then, so the calls still waiting keep their patient limit. A hung one answers nothing: once calls
 * have waited the allowance with no answer in between, `stalled()` gives them all up at once. The allowance
 * is `stallMs`, or twice the longest gap the store has lately answered after (a busy store's own pace,
 * fading by half every 5 s), at most `capMs`. One timer for the store, not one per call: it fires at the
 * earliest moment a stall could be due and, if an answer came meanwhile, moves on to the next such moment.
 */
export class Progress {
  readonly #stallMs: number;
  readonly #capMs: number;
  readonly #stalled: () => void;
  /** The longest gap the store answered after, ms, as of #gapAt (it fades from there). */
  #gapMs = 0;
  #gapAt = 0;
  /** Calls watched and not yet settled. */
  #waiting = 0;
  /** performance.now() of the last answer, or of the moment calls began waiting, whichever is later. */
  #since = 0;
  /** Like #since, but not moved by a stall: where the gap the next answer ends began. */
  #quietFrom = 0;
  /** Calls were given up for a stall and nothing has answered since. */
  #givenUp = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #onTimer = () => {
    this.#timer = undefined;
    this.#check(true);
  };
  /** One more turn first (setImmediate runs after pending I/O): an answer already in the socket counts. */
  readonly #confirm = () => this.#check(false);

  constructor(stallMs: number, stalled: () => void, capMs = Math.max(stallMs, DEFAULT_STALL_CAP_MS)) {
    this.#stallMs = stallMs;
    this.#capMs = Math.max(stallMs, capMs);
    this.#stalled = stalled;
  }

  /** How long calls may wait now with no answer in between, ms. */
  allowanceMs(now = performance.now()): number {
    return Math.min(this.#capMs, Math.max(this.#stallMs, GAP_FACTOR * this.#faded(now)));
  }

  /** The longest gap answered after, faded by its age. */
  #faded(now: number): number {
    return this.#gapMs === 0 ? 0 : this.#gapMs * 0.5 ** ((now - this.#gapAt) / GAP_HALF_LIFE_MS);
  }

  /** A watched call was sent: the store owes it an answer. */
  waiting(): void {
    if (this.#waiting === 0) {
      this.#since = performance.now();
      if (!this.#givenUp) this.#quietFrom = this.#since;
    }
    this.#waiting += 1;
    this.#arm();
  }

  /** A watched call settled (`answered`: the store answered it; else it failed or was given up). */
  settled(answered: boolean): void {
    if (answered) this.answered();
    this.#waiting -= 1;
  }

  /**
   * The store answered a call (watched or not): it is making progress, at the pace of the gap this answer
   * ends. A late answer to calls given up for a stall shows the store was busy, not hung: its gap counts too.
   */
  answered(): void {
    const now = performance.now();
    if (this.#waiting > 0 || this.#givenUp) {
      const gap = now - this.#quietFrom;
      if (gap > this.#faded(now)) {
        this.#gapMs = gap;
        this.#gapAt = now;
      }
    }
    this.#since = now;
    this.#quietFrom = now;
    this.#givenUp = false;
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#waiting === 0) return;
    const now = performance.now();
    const due = this.#since + this.allowanceMs(now) - now;
    this.#timer = setTimeout(this.#onTimer, Math.max(0, due));
    this.#timer.unref();
  }

  #check(first: boolean): void {
    if (this.#waiting === 0) return;
    const now = performance.now();
    if (now - this.#since < this.allowanceMs(now)) {
      this.#arm();
      return;
    }
    if (first) {
      setImmediate(this.#confirm);
      return;
    }
    this.#since = now;
    this.#givenUp = true;
    this.#stalled();
    this.#arm();
  }
}

/**
 * Default time a store may owe answers without giving any, ms, before its waiting calls are given up. Above
 * the 150 ms a saturated Redis was seen to stall per call while still answering; below the 300 ms no request
 * should wait on a hung store.
 */
export const DEFAULT_STALL_MS = 200;

/**
 * Tells a busy store from a hung one by progress. A busy store keeps answering: some call comes back every
 * now and then, so the calls still waiting keep their patient limit. A hung one answers nothing: once calls
 * have waited `stallMs` with no answer in between, `stalled()` gives them all up at once. One timer for the
 * store, not one per call: it fires at the earliest moment a stall could be due and, if an answer came
 * meanwhile, moves on to the next such moment.
 */
export class Progress {
  readonly #stallMs: number;
  readonly #stalled: () => void;
  /** Calls watched and not yet settled. */
  #waiting = 0;
  /** performance.now() of the last answer, or of the moment calls began waiting, whichever is later. */
  #since = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #onTimer = () => {
    this.#timer = undefined;
    this.#check(true);
  };
  /** One more turn first (setImmediate runs after pending I/O): an answer already in the socket counts. */
  readonly #confirm = () => this.#check(false);

  constructor(stallMs: number, stalled: () => void) {
    this.#stallMs = stallMs;
    this.#stalled = stalled;
  }

  /** A watched call was sent: the store owes it an answer. */
  waiting(): void {
    if (this.#waiting === 0) this.#since = performance.now();
    this.#waiting += 1;
    this.#arm();
  }

  /** A watched call settled (`answered`: the store answered it; else it failed or was given up). */
  settled(answered: boolean): void {
    this.#waiting -= 1;
    if (answered) this.answered();
  }

  /** The store answered a call (watched or not): it is making progress. */
  answered(): void {
    this.#since = performance.now();
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#waiting === 0) return;
    const due = this.#since + this.#stallMs - performance.now();
    this.#timer = setTimeout(this.#onTimer, Math.max(0, due));
    this.#timer.unref();
  }

  #check(first: boolean): void {
    if (this.#waiting === 0) return;
    if (performance.now() - this.#since < this.#stallMs) {
      this.#arm();
      return;
    }
    if (first) {
      setImmediate(this.#confirm);
      return;
    }
    this.#since = performance.now();
    this.#stalled();
    this.#arm();
  }
}

import type { NoticeLogger } from '../base/notices.js';

/** The notices a resilient store logs, by stable code (each line names the store first). */
export const RESILIENCE_NOTICES = {
  SLUICE_STORE_UNREACHABLE: 'store unreachable',
  SLUICE_STORE_RECOVERED: 'store reachable again',
  SLUICE_STORE_BUSY: 'store behind',
  SLUICE_STORE_CAUGHT_UP: 'store caught up',
} as const;

/**
 * A busy episode ends once a call succeeds this long after the last request refused at the pending bound:
 * under overload refusals and answers alternate by the millisecond, and each alternation is no new episode.
 */
export const BUSY_QUIET_MS = 1000;

/** What a failing store does meanwhile, for the notice. */
export type FailureMode = 'failing open' | 'answering from the in-process fallback';

/**
 * The store's own view of failure: since when calls fail (for `health()`), and telling the logger once
 * when the store becomes unreachable and once when it answers again, instead of a line per failed
 * reconnect. "Unreachable" is a failure while the connection is down, or `threshold` failures in a row
 * (a hung server, or the breaker opening); a lone timeout is not.
 */
export class FailureMonitor {
  readonly #logger: NoticeLogger;
  readonly #threshold: number;
  readonly #mode: FailureMode;
  readonly #name: string;
  #since: number | undefined;
  #consecutive = 0;
  #told = false;
  #cause: string | undefined;
  /** Epoch ms of the first and the last request refused at the pending bound in the current busy episode. */
  #busySince: number | undefined;
  #lastBusy = 0;
  #refused = 0;

  /** `name` opens each line (`Redis`: "Redis store unreachable"). */
  constructor(logger: NoticeLogger, threshold: number, mode: FailureMode, name = 'remote') {
    this.#logger = logger;
    this.#threshold = threshold;
    this.#mode = mode;
    this.#name = name;
  }

  /** Epoch ms (the limiter's clock) of the first failure of the current run of failures. */
  get failingSince(): number | undefined {
    return this.#since;
  }

  /** An error the client reported (a failed reconnect): kept as the cause to name (its code, never a key). */
  clientError(error: Error & { code?: unknown }): void {
    this.#cause = typeof error.code === 'string' ? error.code : error.name;
  }

  succeeded(now: number): void {
    if (this.#busySince !== undefined && now - this.#lastBusy >= BUSY_QUIET_MS) this.#caughtUp(now);
    if (this.#since === undefined) return;
    if (this.#told) {
      const after = Math.max(0, Math.round(now - this.#since));
      this.#notice('SLUICE_STORE_RECOVERED', `after ${after} ms`);
    }
    this.#since = undefined;
    this.#consecutive = 0;
    this.#told = false;
    this.#cause = undefined;
  }

  failed(now: number, disconnected: boolean, code: string): void {
    this.#since ??= now;
    this.#consecutive += 1;
    if (this.#told || (!disconnected && this.#consecutive < this.#threshold)) return;
    this.#told = true;
    this.#notice('SLUICE_STORE_UNREACHABLE', `(${this.#cause ?? code}), ${this.#mode} until it answers`);
  }

  /**
   * A request refused at the bound on pending requests: told once per episode, apart from unreachability
   * (the store still answers; only the excess fails open).
   */
  busy(now: number, error: Error): void {
    this.#lastBusy = now;
    this.#refused += 1;
    if (this.#busySince !== undefined) return;
    this.#busySince = now;
    this.#notice(
      'SLUICE_STORE_BUSY',
      `(${error.message}), failing open beyond the bound until it catches up`,
    );
  }

  #caughtUp(now: number): void {
    const after = Math.max(0, Math.round(now - this.#busySince!));
    this.#notice(
      'SLUICE_STORE_CAUGHT_UP',
      `after ${after} ms, ${this.#refused} requests failed open at the bound`,
    );
    this.#busySince = undefined;
    this.#refused = 0;
  }

  #notice(code: keyof typeof RESILIENCE_NOTICES, detail: string): void {
    try {
      this.#logger.warn(`sluice: ${this.#name} ${RESILIENCE_NOTICES[code]} ${detail} [${code}]`);
    } catch {
      // A failing logger must not turn a store failure into a request failure.
    }
  }
}

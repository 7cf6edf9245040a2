import type { NoticeLogger } from '../base/notices.js';

/** The notices a resilient store logs, by stable code (each line names the store first). */
export const RESILIENCE_NOTICES = {
  SLUICE_STORE_UNREACHABLE: 'store unreachable',
  SLUICE_STORE_RECOVERED: 'store reachable again',
} as const;

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

  #notice(code: keyof typeof RESILIENCE_NOTICES, detail: string): void {
    try {
      this.#logger.warn(`sluice: ${this.#name} ${RESILIENCE_NOTICES[code]} ${detail} [${code}]`);
    } catch {
      // A failing logger must not turn a store failure into a request failure.
    }
  }
}

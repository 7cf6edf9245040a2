import type { NoticeLogger } from '../base/notices.js';
import type { RegionEvent } from '../observe/contract.js';

/** The partition notices, once per episode (codes listed in base/notices.ts). */
export const REGION_NOTICES = {
  SLUICE_GLOBAL_UNREACHABLE:
    'scope: global rules now decide on this region’s recent share of their limit with the margin, marked ' +
    'global_unreachable, until the global store answers again',
  SLUICE_GLOBAL_REJOINED:
    'the global store answers again: what this region admitted beyond its grant is charged to the global budget',
} as const;

/**
 * An episode of the global store out of reach, as one gateway sees it: begun by a failed round (an error, a
 * time-out, an open breaker, an answer from a fallback), told once to the log and the observer, ended by the
 * next round the global store answers.
 */
export class Partition {
  readonly #region: string;
  readonly #logger: NoticeLogger;
  readonly #emit: (event: RegionEvent) => void;
  /** Limiter-clock ms the episode began; undefined while linked. */
  #since: number | undefined;

  constructor(region: string, logger: NoticeLogger, emit: (event: RegionEvent) => void) {
    this.#region = region;
    this.#logger = logger;
    this.#emit = emit;
  }

  /** True while the global store is out of reach. */
  get active(): boolean {
    return this.#since !== undefined;
  }

  /** A round failed: begins an episode unless one is under way. */
  failed(now: number, why: string): void {
    if (this.#since !== undefined) return;
    this.#since = now;
    this.#warn(
      `sluice: region ${this.#region}: the global store is unreachable (${why}): ${REGION_NOTICES.SLUICE_GLOBAL_UNREACHABLE} [SLUICE_GLOBAL_UNREACHABLE]`,
    );
    this.#emit({ kind: 'unreachable', region: this.#region });
  }

  /** A round went through: ends the episode, if any. */
  answered(now: number): void {
    if (this.#since === undefined) return;
    const afterMs = Math.max(0, Math.round(now - this.#since));
    this.#since = undefined;
    this.#warn(
      `sluice: region ${this.#region}: ${REGION_NOTICES.SLUICE_GLOBAL_REJOINED} after ${afterMs} ms [SLUICE_GLOBAL_REJOINED]`,
    );
    this.#emit({ kind: 'rejoined', region: this.#region, afterMs });
  }

  #warn(line: string): void {
    try {
      this.#logger.warn(line);
    } catch {
      // A logger that throws must not stop the sync loop.
    }
  }
}

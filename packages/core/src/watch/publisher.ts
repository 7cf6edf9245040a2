import type { LimiterHealth } from '../observe/health.js';
import type { Board } from '../store/board.js';
import type { GatewayBoard } from './board.js';
import type { HotKeys } from './hotKeys.js';
import type { WatchSettings } from './options.js';

/** What the publisher reads of its limiter. */
export interface PublisherParts {
  readonly board: Board;
  readonly watch: HotKeys;
  readonly settings: WatchSettings;
  readonly clock: () => number;
  readonly health: () => LimiterHealth;
}

/**
 * Publishes a gateway's board every interval: ONE store call, on an unref'd timer (it never keeps a process
 * alive), never on the request path. At most one publish is out at a time: while the store is slow or away, a
 * tick finds the last one still out and skips, so nothing piles up; a failed publish is counted and dropped
 * (the next one carries the counts on), and readers see the gateway drop off when its board's TTL runs out.
 */
export class BoardPublisher {
  readonly #parts: PublisherParts;
  #timer: ReturnType<typeof setInterval> | undefined;
  #out = false;
  #published = 0;
  #failed = 0;

  constructor(parts: PublisherParts) {
    this.#parts = parts;
  }

  /** Boards published, and publishes that failed, since start. */
  get counts(): { readonly published: number; readonly failed: number } {
    return { published: this.#published, failed: this.#failed };
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.publish(), this.#parts.settings.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Ends the interval and publishes its board; the board, or undefined when the last publish is still out. */
  async publish(): Promise<GatewayBoard | undefined> {
    if (this.#out) return undefined;
    const { board, watch, settings, clock, health } = this.#parts;
    const now = clock();
    const made = watch.tick(now, health());
    this.#out = true;
    try {
      await board.publish(settings.gateway, JSON.stringify(made), settings.ttlMs, now);
      this.#published++;
    } catch {
      this.#failed++;
    } finally {
      this.#out = false;
    }
    return made;
  }
}

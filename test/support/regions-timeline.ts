import { MemoryStore, type RegionScheduler, StoreError } from '@sluice/core';
import type { Check, CheckResult, Lease, Store } from '@sluice/core/store';

/**
 * Virtual time for the regions tests and simulation (issue 44): a clock the limiters read and a scheduler their sync loops use, run
 * by `advance` in time order, with the promise chains of each step settled before the next.
 */
interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  live: boolean;
}

export class Timeline {
  now: number;
  #timers: Timer[] = [];
  #seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.now = start;
  }

  readonly clock = (): number => this.now;

  readonly schedule: RegionScheduler = (run, delayMs) => {
    const timer: Timer = { at: this.now + Math.max(0, delayMs), seq: this.#seq++, run, live: true };
    this.#timers.push(timer);
    return () => {
      timer.live = false;
    };
  };

  /**
   * Runs every timer due up to `now + ms` in time order, and `each` every `stepMs` from now (timers due at
   * the same time first), settling promises after each; ends at `now + ms`.
   */
  async advance(ms: number, each?: (now: number) => void | Promise<void>, stepMs = ms): Promise<void> {
    const end = this.now + ms;
    let step = each === undefined ? Number.POSITIVE_INFINITY : this.now;
    for (;;) {
      await settle();
      const timer = this.#first();
      const timerAt = timer?.at ?? Number.POSITIVE_INFINITY;
      if (Math.min(timerAt, step) > end) break;
      if (timer !== undefined && timerAt <= step) {
        this.now = Math.max(this.now, timerAt);
        timer.live = false;
        timer.run();
        continue;
      }
      this.now = step;
      await each?.(step);
      step += stepMs;
    }
    this.now = end;
    await settle();
  }

  #first(): Timer | undefined {
    this.#timers = this.#timers.filter((t) => t.live);
    let first: Timer | undefined;
    for (const t of this.#timers)
      if (first === undefined || t.at < first.at || (t.at === first.at && t.seq < first.seq)) first = t;
    return first;
  }
}

/** Lets every pending promise chain run (store answers, sync rounds). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * A global store on a link: answers after `latencyMs` of virtual time, or fails at once while `down`. Its
 * counters are a MemoryStore that `restart` empties (a global store losing its data).
 */
export class LinkedStore implements Store {
  readonly timeLimited = true;
  latencyMs: number;
  down = false;
  calls = 0;
  #store = new MemoryStore();
  readonly #timeline: Timeline;

  constructor(timeline: Timeline, latencyMs = 0) {
    this.#timeline = timeline;
    this.latencyMs = latencyMs;
  }

  /** The counters as they are now, read at cost 0 (for assertions). */
  peek(rule: string, tag: string, template: Check): number {
    const [r] = this.#store.evaluateNow(
      [{ ...template, rule, tag, cost: 0, mode: 'shadow', params: { ...template.params, limit: 1e15 } }],
      this.#timeline.now,
    );
    return 1e15 - r!.remaining;
  }

  restart(): void {
    this.#store = new MemoryStore();
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.calls++;
    if (this.down) return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'link down'));
    return new Promise((resolve, reject) => {
      this.#timeline.schedule(() => {
        if (this.down) reject(new StoreError('ERR_SLUICE_STORE', 'link down'));
        else resolve(this.#store.evaluateNow(checks, now).map((r) => ({ ...r })));
      }, this.latencyMs);
    });
  }

  release(_leases: readonly Lease[]): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

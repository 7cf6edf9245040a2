import {
  type CompiledRules,
  compileRules,
  createLimiter,
  type Decision,
  type Descriptors,
  type Limiter,
  MemoryStore,
  type RegionEvent,
  type RegionScheduler,
  type RegionsOptions,
  type RuleSpec,
  StoreError,
} from '@sluice/core';
import {
  type Check,
  type CheckResult,
  evaluateChecks,
  type Lease,
  type StateTable,
  type Store,
} from '@sluice/core/store';

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

/** Earlier first; at the same time, scheduled first. */
const before = (a: Timer, b: Timer): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export class Timeline {
  now: number;
  /** A binary heap of timers (a simulation holds one per gateway). */
  readonly #heap: Timer[] = [];
  #seq = 0;

  constructor(start = 1_700_000_000_000) {
    this.now = start;
  }

  readonly clock = (): number => this.now;

  readonly schedule: RegionScheduler = (run, delayMs) => {
    const timer: Timer = { at: this.now + Math.max(0, delayMs), seq: this.#seq++, run, live: true };
    this.#push(timer);
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
        this.#pop();
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
    while (this.#heap.length > 0 && !this.#heap[0]!.live) this.#pop();
    return this.#heap[0];
  }

  #push(timer: Timer): void {
    const heap = this.#heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  }
}

/** Lets every pending promise chain run (store answers, sync rounds). */
export async function settle(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * The global store's data, shared by the links to it. Key states as a remote store keeps them: each key until its own expiry, read at each call's `now` (as Redis
 * does with its TTLs and PostgreSQL with rows swept on the store's clock), with no sweep driven by the calls.
 */
export class GlobalKeys {
  #entries = new Map<string, { state: unknown; expiresAt: number }>();

  /** The global store restarted without its data. */
  restart(): void {
    this.#entries = new Map();
  }

  table(now: number): StateTable {
    const entries = this.#entries;
    return {
      get: (rule, tag) => {
        const entry = entries.get(`${rule}\n${tag}`);
        return entry === undefined || entry.expiresAt <= now ? undefined : entry.state;
      },
      set: (rule, tag, state, expiresAt) => {
        const key = `${rule}\n${tag}`;
        entries.set(key, { state, expiresAt: expiresAt ?? entries.get(key)?.expiresAt ?? now });
      },
    };
  }
}

/**
 * A region's link to the global store: answers after `latencyMs` of virtual time, or fails at once while
 * `down`. Links made with the same GlobalKeys reach the same data; `keys.restart()` loses it.
 */
export class LinkedStore implements Store {
  readonly timeLimited = true;
  latencyMs: number;
  down = false;
  calls = 0;
  readonly keys: GlobalKeys;
  readonly #timeline: Timeline;

  constructor(timeline: Timeline, latencyMs = 0, keys = new GlobalKeys()) {
    this.#timeline = timeline;
    this.latencyMs = latencyMs;
    this.keys = keys;
  }

  evaluate(checks: readonly Check[], now: number): Promise<CheckResult[]> {
    this.calls++;
    if (this.down) return Promise.reject(new StoreError('ERR_SLUICE_STORE', 'link down'));
    return new Promise((resolve, reject) => {
      this.#timeline.schedule(() => {
        if (this.down) reject(new StoreError('ERR_SLUICE_STORE', 'link down'));
        else resolve(evaluateChecks(checks, now, this.keys.table(now)));
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

/** One region of a world: its name, its link's latency to the global store, how many gateways it runs. */
export interface WorldRegion {
  readonly name: string;
  readonly latencyMs?: number;
  readonly gateways?: number;
}

/** What one region did over a stretch of traffic. */
export interface Tally {
  admitted: number;
  denied: number;
  /** Decisions marked `global_unreachable` (made on the partition share). */
  marked: number;
  /** Calls the region's gateways sent to the global store. */
  globalCalls: number;
}

/**
 * Regions around one global store on virtual time, through the real limiter: each region has its own
 * MemoryStore (its regional store), its gateways (limiters with `regions`), and its link to the global store.
 */
export class RegionWorld {
  readonly timeline: Timeline;
  readonly keys = new GlobalKeys();
  readonly names: readonly string[];
  readonly links: readonly LinkedStore[];
  readonly gateways: readonly (readonly Limiter[])[];
  readonly logs: string[][];
  readonly events: RegionEvent[][];
  readonly #next: number[];

  constructor(options: {
    readonly regions: readonly WorldRegion[];
    readonly rules: CompiledRules;
    readonly syncMs?: number;
    readonly regionOptions?: Partial<RegionsOptions>;
    readonly timeline?: Timeline;
  }) {
    const timeline = options.timeline ?? new Timeline();
    this.timeline = timeline;
    this.names = options.regions.map((r) => r.name);
    this.links = options.regions.map((r) => new LinkedStore(timeline, r.latencyMs ?? 0, this.keys));
    this.logs = options.regions.map(() => []);
    this.events = options.regions.map(() => []);
    this.#next = options.regions.map(() => 0);
    this.gateways = options.regions.map((region, i) => {
      const store = new MemoryStore();
      return Array.from({ length: region.gateways ?? 1 }, () =>
        createLimiter({
          rules: options.rules,
          store,
          clock: timeline.clock,
          logger: { warn: (line) => void this.logs[i]!.push(line) },
          observer: { onRegion: (event) => void this.events[i]!.push(event) },
          regions: {
            region: region.name,
            global: this.links[i]!,
            syncMs: options.syncMs ?? 100,
            schedule: timeline.schedule,
            ...options.regionOptions,
          },
        }),
      );
    });
  }

  /** One request in region `i`, on its gateways in turn; the decision is made without waiting on anything. */
  send(i: number, descriptors: Descriptors = {}): Decision {
    const gateways = this.gateways[i]!;
    const limiter = gateways[this.#next[i]! % gateways.length]!;
    this.#next[i]!++;
    const decision = limiter.decide(descriptors);
    if (decision instanceof Promise) throw new Error('a request waited on a store');
    return decision;
  }

  /** Sends `rates[i]` requests per second to region i for `ms`, in steps of `stepMs`; what each region did. */
  async traffic(rates: readonly number[], ms: number, stepMs = 10): Promise<Tally[]> {
    const tallies = rates.map(
      (_, i): Tally => ({ admitted: 0, denied: 0, marked: 0, globalCalls: -this.links[i]!.calls }),
    );
    const carry = rates.map(() => 0);
    await this.timeline.advance(
      ms,
      () => {
        rates.forEach((rate, i) => {
          carry[i]! += (rate * stepMs) / 1000;
          const tally = tallies[i]!;
          for (; carry[i]! >= 1; carry[i]!--) {
            const decision = this.send(i);
            if (decision.allowed) tally.admitted++;
            else tally.denied++;
            if (decision.reason === 'global_unreachable') tally.marked++;
          }
        });
      },
      stepMs,
    );
    tallies.forEach((tally, i) => {
      tally.globalCalls += this.links[i]!.calls;
    });
    return tallies;
  }

  /** Advances to the start of the next window of `windowMs`. */
  async toNextWindow(windowMs: number): Promise<void> {
    await this.timeline.advance(windowMs - (this.timeline.now % windowMs));
  }

  async close(): Promise<void> {
    await Promise.all(this.gateways.flat().map((limiter) => limiter.close()));
  }
}

/** One `scope: global` fixed_window rule, `search_global`, of `limit` per second for every request. */
export function globalRules(limit: number, extra: Partial<RuleSpec> = {}): CompiledRules {
  return compileRules({
    rules: [
      {
        name: 'search_global',
        key: [],
        global: true,
        limit: { requests: limit, per: '1s' },
        algorithm: 'fixed_window',
        scope: 'global',
        ...extra,
      },
    ],
  });
}

/** What regions admitted (or another count) in one stretch, together. */
export function totalOf(tallies: readonly Tally[], key: keyof Tally = 'admitted'): number {
  return tallies.reduce((sum, t) => sum + t[key], 0);
}

import type { NoticeLogger } from '../base/notices.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { GuardedObserver } from '../observe/guarded.js';
import { withResilience } from '../resilience/resilientStore.js';
import type { CompiledRule } from '../rules/contract.js';
import type { CheckResult, PlannedCheck, Store } from '../store/contract.js';
import { answersInProcess } from '../store/inProcess.js';
import { Counter, regionalCount, type WindowView } from './ledger.js';
import type { RegionSettings } from './options.js';
import { Partition } from './partition.js';
import { applyAnswer, byUrgency, firstSliceOf, type Op, opChecks, planOp, type Sizing } from './round.js';

/** Which budget a `scope: global` rule draws on for a key, as `explain` shows it. */
export interface BudgetView {
  readonly region: string;
  /** The rule's global limit, shared by every region. */
  readonly limit: number;
  /** The region's grant in the current window as this gateway last read it; undefined before its first sync. */
  readonly grant: number | undefined;
  /** What the region decides on now: its grant, a first slice, or its partition share. */
  readonly deciding: number;
  /** True while the global store is out of reach. */
  readonly partitioned: boolean;
}

/** What the budgets read from the limiter. */
export interface BudgetParts {
  readonly clock: () => number;
  readonly observer: Pick<GuardedObserver, 'onRegion'>;
  readonly logger: NoticeLogger;
}

/** Counters a gateway follows at most; the longest unused goes first. */
const MAX_COUNTERS = 10_000;
/** Ops (two checks each) in one call to the global store at most; the most urgent go first. */
const MAX_OPS = 1000;
/** Rounds run back to back (after a charge or an unclear answer) before waiting `syncMs` again. */
const MAX_QUICK_ROUNDS = 2;

/** A logger that drops: the partition notices speak for the global store, not its wrapper. */
const QUIET: NoticeLogger = { warn() {} };

/**
 * The region's side of the global budgets (see docs/guide/regions.md). On the request path, nothing but
 * memory: `scale` sets each global rule's limit to the region's grant (counted in the regional store, in the
 * request's one call), `settled` notes the region's count from the answer, `mark` marks decisions made on a
 * partition share. Off the path, one unref'd timer runs a round every `syncMs` while counters are in use: ONE
 * call to the global store for every counter this gateway follows (a second only for slices taken ahead of
 * the next window), never awaited by a request.
 */
export class RegionalBudgets {
  readonly #settings: RegionSettings;
  readonly #global: Store;
  readonly #clock: () => number;
  readonly #observer: Pick<GuardedObserver, 'onRegion'>;
  readonly #partition: Partition;
  readonly #counters = new Map<string, Counter>();
  /** Names of the rules counted here as global: a partitioned decision marks their results. */
  readonly #globalRules = new Set<string>();
  /** Each rule's last known share, for its counters that have none yet. */
  readonly #shares = new Map<string, number>();
  #cancel: (() => void) | undefined;
  /** Limiter-clock ms the armed timer fires. */
  #armedAt = Number.POSITIVE_INFINITY;
  #inFlight = false;
  #again = false;
  #quick = 0;
  #closed = false;
  #lastPlanned = Number.NEGATIVE_INFINITY;
  /**
   * Whether the next window's first slice is taken ahead of it: a call at that window's start, so the global
   * store must decide at the `now` it is given and keep each key to its own expiry (Redis with the app's
   * clock, PostgreSQL). Not on a store in process, which answers at once (and sweeps by the calls' time),
   * nor once a store shows it decides on a clock of its own.
   */
  #ahead: boolean;
  /**
   * The global store's clock less the limiter's, ms, once its answers show it decides on a clock of its own
   * (Redis with clock: 'redis', PostgreSQL with clock: 'database'); undefined while it decides at the `now` it
   * is given.
   */
  #offset: number | undefined;
  /** Round trip of the global store, ms (moving average). */
  #roundMs = 0;
  #rounds = 0;

  constructor(settings: RegionSettings, parts: BudgetParts) {
    this.#settings = settings;
    this.#clock = parts.clock;
    this.#observer = parts.observer;
    this.#global = withResilience(settings.global, {
      name: 'global',
      timeoutMs: settings.timeoutMs,
      breaker: false,
      maxPending: false,
      logger: QUIET,
    });
    this.#ahead = !answersInProcess(settings.global);
    this.#partition = new Partition(settings.region, parts.logger, (event) => parts.observer.onRegion(event));
  }

  get region(): string {
    return this.#settings.region;
  }

  /** True while the global store is out of reach. */
  get partitioned(): boolean {
    return this.#partition.active;
  }

  /** Rounds sent so far. */
  get rounds(): number {
    return this.#rounds;
  }

  /** Request path: each global rule's check limited to what the region may admit now; others as they are. */
  scale(planned: PlannedCheck[], now: number): PlannedCheck[] {
    let out: PlannedCheck[] | undefined;
    for (let i = 0; i < planned.length; i++) {
      const p = planned[i]!;
      if (p.rule.scope !== 'global') continue;
      out ??= planned.slice();
      const counter = this.#counter(p.rule, p.check.tag, now);
      const view = counter.viewAt(now);
      const limit = this.#deciding(counter, view);
      out[i] = { rule: p.rule, check: { ...p.check, params: { ...p.check.params, limit, burst: limit } } };
      if (!view.known) this.#soon();
    }
    return out ?? planned;
  }

  /**
   * Request path: notes the region's count from each global rule's answer, and shows it as the global
   * budget: the rule's own limit, the grant left plus the budget no region holds yet, and a retry within a
   * round while such budget is left (a slice may come). Other answers as they are.
   */
  settled(
    planned: readonly PlannedCheck[],
    results: readonly CheckResult[],
    now: number,
  ): readonly CheckResult[] {
    let out: CheckResult[] | undefined;
    for (let i = 0; i < planned.length; i++) {
      const p = planned[i]!;
      const r = results[i];
      if (p.rule.scope !== 'global' || r === undefined || r.degraded !== undefined) continue;
      const counter = this.#counters.get(counterKey(p.rule, p.check.tag));
      if (counter === undefined) continue;
      const view = counter.viewAt(now);
      view.used = Math.max(view.used, regionalCount(r));
      const limit = p.rule.params.limit;
      const room = this.#partition.active || !view.known ? 0 : Math.max(0, limit - view.globalGranted);
      if (!r.allowed && p.check.mode === 'enforce' && limit > view.globalGranted) {
        view.starved = true;
        counter.refused += p.check.cost;
      }
      out ??= results.slice();
      out[i] = this.#shown(r, limit, room, p.check.cost);
    }
    return out ?? results;
  }

  /** Marks a decision made while partitioned: its global rules decided on a fallback share. */
  mark(decision: Decision): Decision {
    if (!this.#partition.active) return decision;
    let marked = false;
    const results = decision.results.map((r): RuleResult => {
      if (!this.#globalRules.has(r.rule) || r.failed || r.action !== undefined) return r;
      marked = true;
      return { ...r, failed: true, fallback: true };
    });
    if (!marked) return decision;
    let failedOpen = decision.failedOpen;
    for (const r of results) if (r.failed && r.allowed) failedOpen = true;
    const byGlobal = decision.rule !== undefined && this.#globalRules.has(decision.rule);
    const reason =
      decision.reason === 'allowed' || (decision.reason === 'limit' && byGlobal)
        ? 'global_unreachable'
        : decision.reason;
    return { ...decision, results, failedOpen, reason };
  }

  /** The budget a global rule draws on for a key now (explain). */
  view(rule: CompiledRule, tag: string, now: number): BudgetView {
    const counter = this.#counters.get(counterKey(rule, tag));
    const view = counter?.views.find((v) => v.start <= now && now < v.end);
    const limit = rule.params.limit;
    const partitioned = this.#partition.active;
    const deciding =
      counter !== undefined && view !== undefined
        ? this.#deciding(counter, view)
        : Math.max(
            firstSliceOf(limit, this.#settings.firstSlice),
            partitioned ? this.#fallback(rule, undefined) : 0,
          );
    return {
      region: this.#settings.region,
      limit,
      grant: view?.known === true ? view.held : undefined,
      deciding,
      partitioned,
    };
  }

  /** Sends one round now (the loop does every `syncMs`); never rejects. */
  async sync(): Promise<void> {
    if (this.#closed) return;
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    this.#disarm();
    this.#inFlight = true;
    let again = false;
    try {
      again = await this.#round();
    } finally {
      this.#inFlight = false;
    }
    const quick = (again || this.#again) && this.#quick < MAX_QUICK_ROUNDS;
    this.#again = false;
    this.#quick = quick ? this.#quick + 1 : 0;
    this.#arm(quick ? 0 : this.#settings.syncMs);
  }

  /** Stops the loop; the global store is the app's and stays open. */
  close(): void {
    this.#closed = true;
    this.#disarm();
  }

  /** What the region decides a global rule's counter on now. */
  #deciding(counter: Counter, view: WindowView): number {
    const limit = counter.rule.params.limit;
    let deciding = view.known
      ? view.held
      : Math.max(view.held, firstSliceOf(limit, this.#settings.firstSlice));
    if (this.#partition.active) deciding = Math.max(deciding, this.#fallback(counter.rule, counter.share));
    return deciding;
  }

  /** The partition share: the global limit × the region's recent share × the margin. */
  #fallback(rule: CompiledRule, share: number | undefined): number {
    const known = share ?? this.#shares.get(rule.name) ?? this.#settings.firstSlice;
    const margin = rule.partitionMargin ?? this.#settings.margin;
    return Math.ceil(rule.params.limit * known * margin);
  }

  #shown(r: CheckResult, limit: number, room: number, cost: number): CheckResult {
    const remaining = Math.min(limit, r.remaining + room);
    if (r.allowed || r.bannedUntil !== undefined) return { ...r, limit, remaining };
    const roundMs = this.#settings.syncMs + this.#roundMs;
    const retryAfterMs =
      cost > limit ? Number.POSITIVE_INFINITY : room > 0 ? Math.min(r.resetMs, roundMs) : r.resetMs;
    return { ...r, limit, remaining, retryAfterMs };
  }

  #counter(rule: CompiledRule, tag: string, now: number): Counter {
    const key = counterKey(rule, tag);
    let counter = this.#counters.get(key);
    if (counter === undefined) {
      if (this.#counters.size >= MAX_COUNTERS) this.#counters.delete(this.#counters.keys().next().value!);
      counter = new Counter(rule, tag, now);
      this.#counters.set(key, counter);
      this.#globalRules.add(rule.name);
    } else if (counter.rule !== rule) {
      counter.rule = rule;
      this.#globalRules.add(rule.name);
    }
    counter.lastUse = now;
    return counter;
  }

  /**
   * One round: every counter's op in one call per `now`: the round's own, and the next window's start for
   * slices taken ahead (a second call, sent at the same time). True when another round should follow at once.
   */
  async #round(): Promise<boolean> {
    const now = this.#clock();
    const ops = this.#plan(now);
    if (ops.length === 0) return false;
    const groups = new Map<number, Op[]>();
    for (const op of ops) {
      const group = groups.get(op.at);
      if (group === undefined) groups.set(op.at, [op]);
      else group.push(op);
    }
    const sent = [...groups].map(([at, group]) =>
      this.#send(group, at).then((answers) => ({ at, group, answers })),
    );
    let again = false;
    let failed = false;
    for (const { at, group, answers } of await Promise.all(sent)) {
      if (answers === undefined) failed = true;
      else again = this.#apply(group, answers, at === now) || again;
    }
    return again && !failed;
  }

  /** One call to the global store; undefined when it failed (the partition begins or goes on). */
  async #send(group: readonly Op[], at: number): Promise<readonly CheckResult[] | undefined> {
    const checks = group.flatMap((op) => opChecks(op, this.#settings.region));
    const started = this.#clock();
    this.#rounds++;
    let results: CheckResult[] | undefined;
    let why: string | undefined;
    try {
      results = await this.#global.evaluate(checks, at);
      if (results.length !== checks.length) why = 'it answered a different number of checks';
      else if (results.some((r) => r.degraded !== undefined)) why = 'it answered from a fallback';
    } catch (error) {
      why = error instanceof Error ? error.message : String(error);
    }
    const ended = this.#clock();
    const seconds = Math.max(0, ended - started) / 1000;
    const region = this.#settings.region;
    this.#observer.onRegion({
      kind: 'round',
      region,
      ok: why === undefined,
      seconds,
      counters: group.length,
    });
    if (why !== undefined || results === undefined) {
      this.#partition.failed(ended, why ?? 'no answer');
      return undefined;
    }
    this.#roundMs = this.#roundMs === 0 ? ended - started : (this.#roundMs + ended - started) / 2;
    this.#partition.answered(ended);
    return results;
  }

  /** Reads a call's answers into the views; true when another round should follow at once. */
  #apply(group: readonly Op[], results: readonly CheckResult[], current: boolean): boolean {
    let blocked = false;
    group.forEach((op, k) => {
      if (op.kind !== 'read' && !(results[2 * k]!.allowed && results[2 * k + 1]!.allowed)) blocked = true;
    });
    if (!this.#decidesAt(group, results, current)) return false;
    let again = false;
    group.forEach((op, k) => {
      const applied = applyAnswer(op, results[2 * k]!, results[2 * k + 1]!, blocked);
      const { rule } = op.counter;
      if (applied.committed) {
        const kind = op.kind === 'take' ? 'slice' : 'charge';
        this.#observer.onRegion({ kind, region: this.#settings.region, rule: rule.name, units: op.units });
        // A charge leaves the region at its count: its next slice follows at once.
        if (op.kind === 'charge') again = true;
      }
      if (applied.ambiguous) again = true;
      const { view } = op;
      if (current && view.exact && view.globalGranted > 0) {
        const share = view.regionGranted / view.globalGranted;
        op.counter.share = op.counter.share === undefined ? share : (op.counter.share + share) / 2;
        this.#shares.set(rule.name, op.counter.share);
      }
    });
    return again;
  }

  /**
   * Whether a call's answers count in the window asked for: an answer's reset lies at that window's end. A
   * store on its own clock (Redis with clock: 'redis', PostgreSQL with clock: 'database') shows how far its
   * clock is from the limiter's: from then on a window's counters are only sent while the store's clock is in
   * that window (#inStoreWindow), as a call in another would count in a period the window does not read.
   * Slices taken ahead are then lost to the budget (never over it) and no longer taken; answers decided in
   * another window are left unread.
   */
  #decidesAt(group: readonly Op[], results: readonly CheckResult[], current: boolean): boolean {
    const op = group[0]!;
    const expected = op.view.end - op.at;
    const observed = results[0]!.resetMs;
    if (this.#offset === undefined && Math.abs(observed - expected) <= 1) return true;
    this.#ahead = false;
    if (!current) {
      for (const { counter, view } of group) {
        const at = counter.views.indexOf(view);
        if (at >= 0) counter.views.splice(at, 1);
      }
      return false;
    }
    // The store's now is its window's end less the reset: in this window, or the one before or after.
    const windowMs = op.view.end - op.view.start;
    const same = expected - observed;
    const offset = [same, same - windowMs, same + windowMs].reduce((a, b) =>
      Math.abs(b) < Math.abs(a) ? b : a,
    );
    this.#offset = this.#offset === undefined ? offset : (this.#offset + offset) / 2;
    return offset === same;
  }

  /** Whether the store's clock is in the view's window with a round trip to spare (always, on the given `now`). */
  #inStoreWindow(view: WindowView, now: number): boolean {
    if (this.#offset === undefined) return true;
    const storeNow = now + this.#offset;
    const spare = this.#roundMs + 10;
    return storeNow >= view.start + spare && storeNow < view.end - spare;
  }

  /** This round's ops, most urgent first; counters unused for long are forgotten. */
  #plan(now: number): Op[] {
    const { syncMs, firstSlice, maxSlice } = this.#settings;
    const sizing: Sizing = { firstSlice, maxSlice, horizonMs: 2 * (syncMs + this.#roundMs) };
    const ops: Op[] = [];
    for (const [key, counter] of this.#counters) {
      const view = counter.viewAt(now);
      const windowMs = view.end - view.start;
      if (now - counter.lastUse > Math.max(2 * windowMs, 10 * syncMs)) {
        this.#counters.delete(key);
        continue;
      }
      const inUse = counter.lastUse > this.#lastPlanned;
      counter.sample(view, now);
      if (!this.#inStoreWindow(view, now)) continue;
      const op = planOp(counter, view, now, sizing, inUse);
      if (op !== undefined) ops.push(op);
      // The next window's first slice, taken ahead while the region spends this one.
      if (this.#ahead && inUse && counter.rate > 0 && view.end - now <= sizing.horizonMs) {
        const next = counter.nextView(view);
        const ahead = next.known ? undefined : planOp(counter, next, next.start, sizing, true);
        if (ahead !== undefined) ops.push(ahead);
      }
    }
    this.#lastPlanned = now;
    ops.sort(byUrgency);
    return ops.length > MAX_OPS ? ops.slice(0, MAX_OPS) : ops;
  }

  /** A round as soon as possible (a counter not yet known): now, or right after the one under way. */
  #soon(): void {
    if (this.#inFlight) this.#again = true;
    else if (this.#armedAt > this.#clock()) this.#arm(0);
  }

  #arm(delayMs: number): void {
    if (this.#closed || this.#counters.size === 0) return;
    const at = this.#clock() + delayMs;
    if (this.#cancel !== undefined && this.#armedAt <= at) return;
    this.#disarm();
    this.#armedAt = at;
    this.#cancel = this.#settings.schedule(() => {
      this.#cancel = undefined;
      this.#armedAt = Number.POSITIVE_INFINITY;
      void this.sync();
    }, delayMs);
  }

  #disarm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
  }
}

function counterKey(rule: CompiledRule, tag: string): string {
  return `${rule.name}\u0000${tag}`;
}

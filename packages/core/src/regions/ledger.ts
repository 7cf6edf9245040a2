import type { CompiledRule } from '../rules/contract.js';
import type { CheckResult } from '../store/contract.js';
import { type Window, windowOf } from './windows.js';

/**
 * What one gateway knows of a global counter's budget in one window. `held` is the region's grant: what the
 * request path lets the region admit (its count is checked against it in the regional store). Grants only
 * grow within a window, so a view read earlier is lower than the truth: stale means cautious, never over.
 */
export class WindowView implements Window {
  readonly start: number;
  readonly end: number;
  /** Slices granted to this region (R) as last read: exact when `exact`, else a lower bound. */
  regionGranted = 0;
  exact = false;
  /** True once the global store has answered for this window. */
  known = false;
  /** The most the region was ever known to be granted: its grant (a loss in the global store reads below it). */
  held = 0;
  /** Slices granted to every region (G) as last read: a lower bound. */
  globalGranted = 0;
  /** The region's count, as this gateway's requests last saw it in the regional store. */
  used = 0;
  /** A request was refused on this grant while the global budget still had room: the next slice doubles. */
  starved = false;
  /** Units of the last slice taken. */
  lastSlice = 0;

  constructor(window: Window) {
    this.start = window.start;
    this.end = window.end;
  }
}

/** One global counter (rule and key) as this gateway follows it: its windows and the region's demand. */
export class Counter {
  rule: CompiledRule;
  readonly tag: string;
  /** The current window's view, and the next one's once its first slice is taken ahead. */
  readonly views: WindowView[] = [];
  /** The region's consumption, units per ms (a moving average over rounds). */
  rate = 0;
  /** The region's share of the global grants, as last read; undefined until the first read. */
  share: number | undefined;
  /** Limiter-clock ms of the last request that counted here. */
  lastUse: number;
  /** Units this gateway saw refused short of the grant since the last sample: demand the count does not show. */
  refused = 0;
  #sampleAt = Number.NaN;
  #sampleUsed = 0;
  #sampleStart = Number.NaN;

  constructor(rule: CompiledRule, tag: string, now: number) {
    this.rule = rule;
    this.tag = tag;
    this.lastUse = now;
  }

  /** The view of the window holding `now` (made when missing); older windows are forgotten. */
  viewAt(now: number): WindowView {
    const window = windowOf(this.rule.params, now);
    const views = this.views;
    while (views.length > 0 && views[0]!.start < window.start) views.shift();
    if (views[0]?.start === window.start) return views[0];
    // A view of a later window (taken ahead, or a clock stepped back) stays behind this one.
    const view = new WindowView(window);
    views.unshift(view);
    if (views.length > 2) views.length = 2;
    return view;
  }

  /** The view of the window after `view` (made when missing), for its first slice taken ahead. */
  nextView(view: WindowView): WindowView {
    const next = this.views.find((v) => v.start === view.end);
    if (next !== undefined) return next;
    const made = new WindowView(windowOf(this.rule.params, view.end));
    this.views.push(made);
    return made;
  }

  /** Folds the region's demand since the last sample (its count's growth, and refusals seen) into `rate`. */
  sample(view: WindowView, now: number): void {
    const since = view.start === this.#sampleStart ? this.#sampleAt : view.start;
    const before = view.start === this.#sampleStart ? this.#sampleUsed : 0;
    if (now > since) {
      const instant = (Math.max(0, view.used - before) + this.refused) / (now - since);
      this.rate = this.rate === 0 ? instant : (this.rate + instant) / 2;
    }
    this.refused = 0;
    this.#sampleAt = now;
    this.#sampleUsed = view.used;
    this.#sampleStart = view.start;
  }
}

/**
 * A region's count in the regional store from the answer to its check: exact when allowed (after this
 * request), else the count the answer shows (at least the limit when none is left).
 */
export function regionalCount(result: CheckResult): number {
  if (result.allowed || result.remaining > 0) return result.limit - result.remaining;
  return result.limit;
}

/** A counter's count before a call, from its answer to a check of `cost`: exact, or a lower bound. */
export function countBefore(result: CheckResult, cost: number): { count: number; exact: boolean } {
  if (result.allowed) return { count: result.limit - result.remaining - cost, exact: true };
  if (result.remaining > 0) return { count: result.limit - result.remaining, exact: true };
  return { count: result.limit, exact: false };
}

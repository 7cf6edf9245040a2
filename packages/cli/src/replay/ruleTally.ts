import { type CompiledRule, costFor, type Descriptors, type RuleResult } from '@sluice/core';
import { ExactWindow } from './exactWindow.js';
import { keyLabel } from './keys.js';
import type { AccuracyReport, KeyRow, RuleReport } from './report.js';
import { RETRY_AFTER_LABELS, retryAfterBucket } from './retryAfter.js';

const HOUR_MS = 3_600_000;

/** Algorithms whose estimate is judged against the exact sliding log. */
const JUDGED = new Set(['sliding_window', 'fixed_window']);

interface KeyTally {
  matched: number;
  denied: number;
  wouldBe: number;
  falseAllows: number;
  falseDenials: number;
  peak: number;
  readonly exact: ExactWindow | undefined;
}

/** How keys are shown in the report. */
export interface KeyDisplay {
  readonly showKeys: boolean;
  readonly keySecret: string | undefined;
  readonly top: number;
}

const byDenials = (a: KeyRow, b: KeyRow) => b.denied + b.wouldBe - (a.denied + a.wouldBe);
const byErrors = (a: KeyRow, b: KeyRow) => b.falseAllows + b.falseDenials - (a.falseAllows + a.falseDenials);

/** One rule's counts over a replay: per key, per hour, per Retry-After bucket, and the estimate's error. */
export class RuleTally {
  readonly rule: CompiledRule;
  readonly #judged: boolean;
  readonly #keys = new Map<string, KeyTally>();
  readonly #hours = new Map<number, [denied: number, wouldBe: number]>();
  readonly #retryAfter: number[] = RETRY_AFTER_LABELS.map(() => 0);
  #matched = 0;
  #denied = 0;
  #wouldBe = 0;
  #judgedCount = 0;

  constructor(rule: CompiledRule) {
    this.rule = rule;
    this.#judged = JUDGED.has(rule.algorithm) && (rule.shards ?? 1) <= 1;
  }

  /**
   * Counts one evaluation of the rule. `committed`: the request went through, so the rule's counter took it (a
   * request denied by any enforcing rule consumes nothing anywhere); the exact log then logs it too, so both
   * judge the same admitted history.
   */
  add(id: string, result: RuleResult, committed: boolean, now: number, descriptors: Descriptors): void {
    this.#matched++;
    const key = this.#key(id);
    key.matched++;
    const refused = !result.allowed || result.shadowDenied;
    if (refused) {
      if (result.shadowDenied) {
        this.#wouldBe++;
        key.wouldBe++;
      } else {
        this.#denied++;
        key.denied++;
      }
      this.#hour(now)[result.shadowDenied ? 1 : 0]++;
      const bucket = retryAfterBucket(result.retryAfterMs);
      this.#retryAfter[bucket] = (this.#retryAfter[bucket] ?? 0) + 1;
    }
    if (key.exact !== undefined) this.#judge(key, key.exact, refused, committed, now, descriptors);
  }

  #judge(
    key: KeyTally,
    exact: ExactWindow,
    refused: boolean,
    committed: boolean,
    now: number,
    descriptors: Descriptors,
  ): void {
    this.#judgedCount++;
    const cost = costFor(this.rule.cost, descriptors, 1);
    const used = exact.used(now);
    const fits = cost <= this.rule.params.limit && used + cost <= this.rule.params.limit;
    if (!refused && !fits) key.falseAllows++;
    if (refused && fits) key.falseDenials++;
    if (committed && !refused && cost > 0) {
      exact.add(now, cost);
      if (used + cost > key.peak) key.peak = used + cost;
    }
  }

  #key(id: string): KeyTally {
    let key = this.#keys.get(id);
    if (key === undefined) {
      key = {
        matched: 0,
        denied: 0,
        wouldBe: 0,
        falseAllows: 0,
        falseDenials: 0,
        peak: 0,
        exact: this.#judged ? new ExactWindow(this.rule.params.windowMs) : undefined,
      };
      this.#keys.set(id, key);
    }
    return key;
  }

  #hour(now: number): [number, number] {
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    let counts = this.#hours.get(hour);
    if (counts === undefined) {
      counts = [0, 0];
      this.#hours.set(hour, counts);
    }
    return counts;
  }

  /** The rule's report; `hours` are the replay's hours, for aligned per-hour counts. */
  finish(hours: readonly number[], display: KeyDisplay): RuleReport {
    const rows = (filter: (k: KeyTally) => boolean, order: (a: KeyRow, b: KeyRow) => number) =>
      [...this.#keys]
        .filter(([, k]) => filter(k))
        .map(([id, k]) => this.#row(id, k, display))
        .sort(order);
    const topKeys = rows((k) => k.denied + k.wouldBe > 0, byDenials).slice(0, display.top);
    const { rule } = this;
    return {
      rule: rule.name,
      algorithm: rule.algorithm,
      mode: rule.mode,
      limit: rule.params.limit,
      windowMs: rule.params.windowMs,
      matched: this.#matched,
      denied: this.#denied,
      wouldBe: this.#wouldBe,
      distinctKeys: this.#keys.size,
      topKeys,
      deniedPerHour: hours.map((hour) => this.#hours.get(hour)?.[0] ?? 0),
      wouldBePerHour: hours.map((hour) => this.#hours.get(hour)?.[1] ?? 0),
      retryAfter: [...this.#retryAfter],
      accuracy: this.#judged
        ? this.#accuracy(
            rows((k) => k.falseAllows + k.falseDenials > 0, byErrors),
            display,
          )
        : undefined,
    };
  }

  #accuracy(withErrors: readonly KeyRow[], display: KeyDisplay): AccuracyReport {
    let falseAllows = 0;
    let falseDenials = 0;
    let peak = 0;
    for (const key of this.#keys.values()) {
      falseAllows += key.falseAllows;
      falseDenials += key.falseDenials;
      peak = Math.max(peak, key.peak);
    }
    return {
      judged: this.#judgedCount,
      falseAllows,
      falseDenials,
      keysWithErrors: withErrors.length,
      peak,
      worst: withErrors[0],
      byKey: withErrors.slice(0, display.top),
    };
  }

  #row(id: string, k: KeyTally, display: KeyDisplay): KeyRow {
    return {
      key: keyLabel(this.rule, id, display.showKeys, display.keySecret),
      matched: k.matched,
      denied: k.denied,
      wouldBe: k.wouldBe,
      falseAllows: k.falseAllows,
      falseDenials: k.falseDenials,
      peak: k.peak,
    };
  }
}

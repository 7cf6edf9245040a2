import type { AlgorithmName, Mode } from '@sluice/core/store';

/** One key's figures under one rule. */
export interface KeyRow {
  /** Counter tag (hashed), or the descriptor values with `--show-keys`. */
  readonly key: string;
  readonly matched: number;
  readonly denied: number;
  readonly wouldBe: number;
  readonly falseAllows: number;
  readonly falseDenials: number;
  /** Most units the exact log counted in one window for this key (accuracy rules only; else 0). */
  readonly peak: number;
}

/** How far a rule's estimate strayed from the exact sliding log, judged on the same admitted requests. */
export interface AccuracyReport {
  /** Requests judged by both. */
  readonly judged: number;
  /** Let through while the exact log had no room: the overshoot. */
  readonly falseAllows: number;
  /** Refused while the exact log had room. */
  readonly falseDenials: number;
  readonly keysWithErrors: number;
  /** Most units the exact log counted in one window, over every key: above the limit means overshoot. */
  readonly peak: number;
  /** The key with the most errors, if any. */
  readonly worst: KeyRow | undefined;
  /** Keys with errors, most first (up to `top`). */
  readonly byKey: readonly KeyRow[];
}

/** Everything a replay found about one rule. */
export interface RuleReport {
  readonly rule: string;
  readonly algorithm: AlgorithmName;
  readonly mode: Mode;
  readonly limit: number;
  readonly windowMs: number;
  readonly matched: number;
  /** Denied by the rule while enforced. */
  readonly denied: number;
  /** Would have been denied: shadow mode, or a key outside the rollout. */
  readonly wouldBe: number;
  readonly distinctKeys: number;
  /** Keys with denials (either kind), most first (up to `top`). */
  readonly topKeys: readonly KeyRow[];
  /** Denials (enforced and would-be) per hour, aligned with the report's `hours`. */
  readonly deniedPerHour: readonly number[];
  readonly wouldBePerHour: readonly number[];
  /** Denials by Retry-After bucket, aligned with RETRY_AFTER_LABELS. */
  readonly retryAfter: readonly number[];
  /** For sliding_window and fixed_window rules (not sharded). */
  readonly accuracy: AccuracyReport | undefined;
}

/** What `sluice replay` and `sluice simulate` print. */
export interface ReplayReport {
  readonly domain: string;
  readonly version: string;
  /** Requests decided. */
  readonly requests: number;
  /** Requests the limiter denied (an enforcing rule said no). */
  readonly denied: number;
  /** Requests the log says were answered 429 at the time. */
  readonly logged429: number;
  /** Lines that were garbled (no time, no request). */
  readonly unreadable: number;
  /** Lines of another kind (Sluice's rules-loaded lines, say). */
  readonly ignored: number;
  /** Requests whose time was more than a second before the latest one seen: logs not in time order. */
  readonly outOfOrder: number;
  readonly from: number | undefined;
  readonly to: number | undefined;
  /** Start of each UTC hour from the first request to the last (ms). */
  readonly hours: readonly number[];
  /** Every rule of the table, matched or not, in file order. */
  readonly rules: readonly RuleReport[];
}

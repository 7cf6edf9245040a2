import { checkOptionNames } from '../base/optionNames.js';
import type { CompiledRule, CompiledRules, Descriptors } from '../rules/contract.js';
import type { StoreErrorKind } from '../store/contract.js';
import { hashText, tagFor } from '../store/tags.js';
import type { Decision, Observer, RuleResult } from './contract.js';

/** The part of a pino (or bunyan, or console-like) logger that decision logs use. */
export interface DecisionLogger {
  info(entry: object): void;
  warn(entry: object): void;
}

/** What one request came to: denied, allowed, or allowed while a shadow rule (or rollout) would have denied. */
export type LoggedOutcome = 'allowed' | 'denied' | 'shadow_denied' | 'failed_open';

/** Sampling rates, 0 (never) to 1 (every decision), one per outcome. */
export interface SampleRates {
  /** Default 0: allowed requests are the bulk of traffic and the least interesting. */
  readonly allowed?: number;
  /** Default 1. */
  readonly denied?: number;
  /** Default 1: `sluice report` reads these to review a shadow rollout. */
  readonly shadowDenied?: number;
  /** Default 1: requests let through because the store failed. */
  readonly failedOpen?: number;
}

/** Options of {@link decisionLogObserver}. */
export interface DecisionLogOptions {
  readonly logger: DecisionLogger;
  readonly sample?: SampleRates;
  /** The limiter's `keySecret`, so that logged hashes are keyed (HMAC) and `key` equals the counter tag. */
  readonly keySecret?: string;
  /** Descriptor names whose values are not secret and may be logged in clear (say `route`, `method`). */
  readonly clear?: readonly string[];
  /** Milliseconds since the epoch, written as `ts`; default `Date.now`. */
  readonly clock?: () => number;
  /** Uniform random numbers in [0, 1) for sampling; default `Math.random`. */
  readonly random?: () => number;
  /** Minimum time between two store error lines (the rest are counted into the next); default 10 s. */
  readonly storeErrorIntervalMs?: number;
}

/** One evaluated rule in a decision log line. */
export interface LoggedRule {
  readonly rule: string;
  readonly mode: string;
  readonly outcome: LoggedOutcome;
  readonly remaining: number | null;
  readonly retryAfterMs: number | null;
  /** The counter tag, as stored; absent for rules this observer was not told about (route-level rules). */
  readonly key?: string;
}

/** A decision log line (`event: 'sluice.decision'`). */
export interface DecisionLogEntry {
  readonly event: 'sluice.decision';
  readonly msg: string;
  readonly ts: number;
  readonly outcome: LoggedOutcome;
  readonly reason: string;
  readonly rule: string | null;
  readonly mode: string | null;
  readonly remaining: number | null;
  readonly retryAfterMs: number | null;
  readonly version: string;
  readonly domain: string | null;
  /** The rate this line was sampled at: a reader counts it as 1 / sample decisions. */
  readonly sample: number;
  /** Descriptor values hashed with hashText (keyed with `keySecret`), except names listed in `clear`. */
  readonly descriptors: Readonly<Record<string, string>>;
  readonly results: readonly LoggedRule[];
}

const DECISION_LOG_OPTIONS: readonly (keyof DecisionLogOptions)[] = [
  'logger',
  'sample',
  'keySecret',
  'clear',
  'clock',
  'random',
  'storeErrorIntervalMs',
];

const DEFAULT_RATES: Required<SampleRates> = { allowed: 0, denied: 1, shadowDenied: 1, failedOpen: 1 };
const RATE_KEY: Record<LoggedOutcome, keyof SampleRates> = {
  allowed: 'allowed',
  denied: 'denied',
  shadow_denied: 'shadowDenied',
  failed_open: 'failedOpen',
};

/** How a request came out: a denial first, then a store failure, then a would-be denial. */
export function decisionOutcome(decision: Decision): LoggedOutcome {
  if (!decision.allowed) return 'denied';
  if (decision.failedOpen) return 'failed_open';
  return decision.results.some((r) => r.shadowDenied) ? 'shadow_denied' : 'allowed';
}

function ruleOutcome(result: RuleResult): LoggedOutcome {
  if (result.failed && result.allowed) return 'failed_open';
  if (result.shadowDenied) return 'shadow_denied';
  return result.allowed ? 'allowed' : 'denied';
}

/** Infinity (no limit, never allowed) is not JSON: written as null. */
function finite(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}

function checkRate(name: string, rate: number): number {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`sample.${name} must be between 0 and 1, got ${rate}`);
  return rate;
}

/**
 * An Observer writing sampled decision logs (one JSON object per decision) with hashed descriptor values, and
 * warnings for rejected rule reloads, overdue reviews at load and store errors (throttled).
 */
export function decisionLogObserver(options: DecisionLogOptions): Observer {
  checkOptionNames('decisionLogObserver', options, DECISION_LOG_OPTIONS);
  checkOptionNames('decisionLogObserver sample', options.sample, Object.keys(DEFAULT_RATES));
  const { logger, keySecret } = options;
  const rates = { ...DEFAULT_RATES, ...options.sample };
  for (const [name, rate] of Object.entries(rates)) checkRate(name, rate);
  const clear = new Set(options.clear ?? []);
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const errorInterval = options.storeErrorIntervalMs ?? 10_000;
  let rulesByName = new Map<string, CompiledRule>();
  let domain: string | null = null;
  let lastErrorAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;

  function hashed(descriptors: Descriptors): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(descriptors)) {
      if (value !== undefined) out[name] = clear.has(name) ? value : hashText(value, keySecret);
    }
    return out;
  }

  function loggedRule(result: RuleResult, descriptors: Descriptors): LoggedRule {
    const rule = rulesByName.get(result.rule);
    const key = rule ? tagFor(rule, descriptors, keySecret) : undefined;
    return {
      rule: result.rule,
      mode: result.mode,
      outcome: ruleOutcome(result),
      remaining: finite(result.remaining),
      retryAfterMs: finite(result.retryAfterMs),
      ...(key === undefined ? {} : { key }),
    };
  }

  function onDecision(decision: Decision, descriptors: Descriptors): void {
    const outcome = decisionOutcome(decision);
    const sample = rates[RATE_KEY[outcome]];
    if (sample === 0 || (sample < 1 && random() >= sample)) return;
    const shown = decision.results.find((r) => r.rule === decision.rule);
    const entry: DecisionLogEntry = {
      event: 'sluice.decision',
      msg: `sluice ${outcome.replace('_', ' ')}${decision.rule ? ` by ${decision.rule}` : ''}`,
      ts: clock(),
      outcome,
      reason: decision.reason,
      rule: decision.rule ?? null,
      mode: shown?.mode ?? null,
      remaining: finite(decision.remaining),
      retryAfterMs: finite(decision.retryAfterMs),
      version: decision.version,
      domain,
      sample,
      descriptors: hashed(descriptors),
      results: decision.results.map((r) => loggedRule(r, descriptors)),
    };
    if (outcome === 'denied' || outcome === 'failed_open') logger.warn(entry);
    else logger.info(entry);
  }

  function onRulesLoaded(rules: CompiledRules): void {
    rulesByName = new Map(rules.rules.map((rule) => [rule.name, rule]));
    domain = rules.domain;
    const today = new Date(clock()).toISOString().slice(0, 10);
    const overdue = rules.rules.filter((rule) => rule.review !== undefined && rule.review < today);
    logger.info({
      event: 'sluice.rules_loaded',
      msg: `sluice rules ${rules.domain} version ${rules.version} in force`,
      domain: rules.domain,
      version: rules.version,
      rules: rules.rules.length,
    });
    if (overdue.length > 0) {
      logger.warn({
        event: 'sluice.review_overdue',
        msg: `sluice rules past their review date: ${overdue.map((rule) => rule.name).join(', ')}`,
        rules: overdue.map((rule) => ({ rule: rule.name, review: rule.review, owner: rule.owner ?? null })),
      });
    }
  }

  function onStoreError(kind: StoreErrorKind, error: Error): void {
    const now = clock();
    if (now - lastErrorAt < errorInterval) {
      suppressed++;
      return;
    }
    logger.warn({
      event: 'sluice.store_error',
      msg: `sluice store ${kind}: ${error.message}`,
      kind,
      error: error.message,
      suppressed,
    });
    lastErrorAt = now;
    suppressed = 0;
  }

  return {
    onDecision,
    onRulesLoaded,
    onStoreError,
    onRulesError(error) {
      logger.warn({
        event: 'sluice.rules_error',
        msg: 'sluice rules rejected; the last good version stays in force',
        error: error.message,
      });
    },
  };
}

import type { DeniedBody, HeaderValues } from '../fields/responses.js';
import type { Decision, RuleResult } from '../observe/contract.js';
import type { CompiledRule, CompiledRules } from '../rules/contract.js';
import type { SolutionRefusal } from './challenge.js';

/**
 * Escalation stages of a response, from a rule's `warn_at`, `challenge` and `ban`: `warn` (allowed, past the
 * warning share of the limit), `limit` (the 429), `challenge` (a 429 after `challenge.after` violations),
 * `ban` (the key is banned).
 */
export type EscalationStage = 'warn' | 'limit' | 'challenge' | 'ban';

/** The stage of one response and the rule that put it there. */
export interface StageOf {
  readonly stage: EscalationStage;
  readonly rule: string;
  /** `warn`: the share of the limit used (0.85); `challenge`: the key's violations so far. */
  readonly used?: number;
  readonly violations?: number;
}

/** Header naming a response's stage: `Sluice-Stage: warn;rule="api"` (an RFC 9651 item with a parameter). */
export const STAGE_HEADER = 'Sluice-Stage';

/** Rules of a table that have a stage of their own (`warn_at`, `challenge`), by name; null when none has. */
const staged = new WeakMap<CompiledRules, ReadonlyMap<string, CompiledRule> | null>();

function stagedRules(table: CompiledRules | undefined): ReadonlyMap<string, CompiledRule> | null {
  if (table === undefined) return null;
  let byName = staged.get(table);
  if (byName === undefined) {
    const found = table.rules.filter((rule) => rule.warnAt !== undefined || rule.challenge !== undefined);
    byName = found.length === 0 ? null : new Map(found.map((rule) => [rule.name, rule]));
    staged.set(table, byName);
  }
  return byName;
}

/** Whether a table has a rule with a stage of its own (`warn_at`, `challenge`); false for none. */
export function hasStages(table: CompiledRules | undefined): boolean {
  return stagedRules(table) !== null;
}

/**
 * The stage of a decision denied or allowed by a rule with `warn_at` or `challenge`: a ban, a challenge or a
 * plain 429 when denied, a warning when an enforcing rule with `warn_at` is past its share; undefined
 * otherwise (below every share, a 403 of a `deny` rule, a rule without stages). `tables`: the limiter's and the route's, where the rules are looked up.
 */
export function stageOf(
  decision: Decision,
  tables: readonly (CompiledRules | undefined)[],
): StageOf | undefined {
  if (decision.action !== undefined) return undefined;
  const rules = tables.map(stagedRules);
  // Responses of tables without stages stay exactly as they were.
  if (rules.every((byName) => byName === null)) return undefined;
  const find = (name: string) => rules.map((byName) => byName?.get(name)).find((rule) => rule !== undefined);
  return decision.allowed ? warnedStage(decision.results, find) : deniedStage(decision, find);
}

function deniedStage(
  decision: Decision,
  find: (name: string) => CompiledRule | undefined,
): StageOf | undefined {
  const name = decision.rule;
  const rule = name === undefined ? undefined : find(name);
  if (name === undefined || rule === undefined || decision.failedOpen) return undefined;
  if (decision.bannedUntil !== undefined) return { stage: 'ban', rule: name };
  const denying = decision.results.find((r) => r.rule === name && !r.allowed);
  const violations = denying?.violations;
  const challenge = rule.challenge;
  if (challenge !== undefined && violations !== undefined && violations >= challenge.after)
    return { stage: 'challenge', rule: name, violations };
  return { stage: 'limit', rule: name };
}

/** The most used rule past its warning share, if any. */
function warnedStage(
  results: readonly RuleResult[],
  find: (name: string) => CompiledRule | undefined,
): StageOf | undefined {
  let warned: StageOf | undefined;
  for (const r of results) {
    if (r.mode !== 'enforce' || r.failed || !(r.limit > 0) || r.action !== undefined) continue;
    const warnAt = find(r.rule)?.warnAt;
    if (warnAt === undefined) continue;
    const used = Math.min(1, (r.limit - r.remaining) / r.limit);
    if (used >= warnAt && (warned === undefined || used > (warned.used ?? 0)))
      warned = { stage: 'warn', rule: r.rule, used: Math.round(used * 100) / 100 };
  }
  return warned;
}

/** The `Sluice-Stage` header value of a stage. */
export function stageHeader(stage: StageOf): string {
  return `${stage.stage};rule="${stage.rule.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/** Where a warning's decision-log line goes: the logger's `info`, when `decisionLog` is on. */
export type StageLog = ((entry: object) => void) | undefined;

/** Who hears of each stage a response reaches; the adapters' observer is one. */
export interface StageObserver {
  /**
   * A response of a rule with `warn_at` or `challenge` reached an escalation stage; also `solved` (a good
   * solution earned a pass) and `refused` (a solution refused, with its reason).
   */
  onStage?(stage: EscalationStage | 'solved' | 'refused', rule: string, reason?: SolutionRefusal): void;
}

/**
 * What escalation adds to a response: headers on any, and on a denial the body's fields and a page for a
 * browser. The request flow puts them on its verdict; escalation never sees one.
 */
export interface ResponseMarks {
  readonly headers: HeaderValues;
  readonly body?: Pick<DeniedBody, 'stage' | 'challenge'>;
  readonly html?: string;
}

/**
 * The marks of a stage: the `Sluice-Stage` header, and on a 429 the body's `stage`. A warning writes one
 * decision-log line (the rule and the share used; never the key).
 */
export function stageMarks(
  stage: StageOf,
  log: StageLog,
  observer: StageObserver | undefined,
): ResponseMarks {
  try {
    observer?.onStage?.(stage.stage, stage.rule);
  } catch {
    // An observer bug must not reach the request path.
  }
  const headers = { [STAGE_HEADER]: stageHeader(stage) };
  if (stage.stage === 'warn') {
    log?.({ event: 'rate_limit_warning', rule: stage.rule, used: stage.used });
    return { headers };
  }
  return { headers, body: { stage: stage.stage } };
}

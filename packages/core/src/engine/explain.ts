import type { Lists } from '../lists/contract.js';
import type { BudgetView, RegionalBudgets } from '../regions/index.js';
import { type ActionOutcome, resolveActions } from '../rules/actions.js';
import type {
  CompiledRule,
  CompiledRules,
  Descriptors,
  Mode,
  RuleAction,
  RuleScope,
} from '../rules/contract.js';
import { tagFor } from '../store/tags.js';
import { effectiveMode } from './plan.js';
import { type CheckOptions, matchedRules } from './requestPath.js';

/** One rule that applies to a request, as `explain` shows it. */
export interface ExplainedRule {
  readonly rule: string;
  /** `limit` counts; `deny` refuses; `allow` exempts from other rules. */
  readonly action: RuleAction;
  /** The allow rule that exempts the request from this rule; the rule is then not evaluated. */
  readonly exemptedBy?: string;
  readonly algorithm: string;
  readonly key: readonly string[];
  /** Hashed counter tag, as stored; undefined when a key descriptor is missing. */
  readonly tag: string | undefined;
  readonly mode: Mode;
  /** Mode for this key after rollout. */
  readonly effectiveMode: Mode | undefined;
  readonly rollout: number;
  readonly scope: RuleScope;
  /** `scope: global` on a limiter with regions: the global budget this key draws on, seen from the region. */
  readonly budget?: BudgetView;
}

/** What the limiter would evaluate for some descriptors, without calling a store. */
export interface Explanation {
  readonly version: string;
  readonly rules: readonly ExplainedRule[];
  /**
   * Set when an action rule decides the request before anything is counted: `deny` (refused by `rule`) or
   * `allow` (`rule` exempts it from every other rule). Precedence: allow, then deny, then limit.
   */
  readonly decidedBy?: { readonly rule: string; readonly action: 'deny' | 'allow' };
}

/** How counters are keyed and whether every rule is in shadow mode, as the limiter was built. */
export interface ExplainSettings {
  readonly secret: string | undefined;
  readonly dryRun: boolean;
  readonly lists: Lists | undefined;
  /** The limiter's global budgets, when it has regions. */
  readonly regions?: RegionalBudgets | undefined;
}

/** The rules of `rules` (and the check's own) that apply to these descriptors at `now`, and their tags. */
export function explainRequest(
  rules: CompiledRules,
  descriptors: Descriptors,
  opts: CheckOptions,
  now: number,
  settings: ExplainSettings,
): Explanation {
  const matched = matchedRules(rules, descriptors, opts, now, settings.lists);
  const acted =
    rules.actions === true || opts.rules?.actions === true
      ? resolveActions(matched, settings.dryRun)
      : undefined;
  return {
    version: rules.version,
    rules: matched.map((rule) => explainRule(rule, descriptors, acted, settings, now)),
    ...(acted?.decidedBy === undefined
      ? {}
      : { decidedBy: { rule: acted.decidedBy.name, action: acted.decidedBy.action ?? 'allow' } }),
  };
}

/** One matched rule as `explain` shows it: its counter tag and mode for these descriptors. */
export function explainRule(
  rule: CompiledRule,
  descriptors: Descriptors,
  acted: ActionOutcome | undefined,
  settings: ExplainSettings,
  now = 0,
): ExplainedRule {
  const counts = rule.action === undefined;
  const tag = counts ? tagFor(rule, descriptors, settings.secret) : undefined;
  const exemptedBy = acted?.exempted.get(rule.name);
  const { regions } = settings;
  const budget =
    regions !== undefined && rule.scope === 'global' && tag !== undefined
      ? regions.view(rule, tag, now)
      : undefined;
  return {
    rule: rule.name,
    action: rule.action ?? 'limit',
    ...(exemptedBy === undefined ? {} : { exemptedBy }),
    algorithm: rule.algorithm,
    key: rule.key,
    tag,
    mode: rule.mode,
    effectiveMode: modeFor(rule, tag, settings.dryRun),
    rollout: rule.rollout,
    scope: rule.scope,
    ...(budget === undefined ? {} : { budget }),
  };
}

/** A counting rule's mode for its tag after rollout (unknown without a tag); an action rule's own mode. */
function modeFor(rule: CompiledRule, tag: string | undefined, dryRun: boolean): Mode | undefined {
  if (rule.action !== undefined) return dryRun ? 'shadow' : rule.mode;
  return tag === undefined ? undefined : effectiveMode(rule, tag, dryRun);
}

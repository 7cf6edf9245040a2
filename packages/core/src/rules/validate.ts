import { checkDuplicateNames, checkOverrides, checkRawMatch, checkRule, warnRule } from './check.js';
import { checkExemptNames } from './checkActions.js';
import { type Finding, findingsFromIssues } from './findings.js';
import { documentSchema, type ParsedRule, ruleSchema } from './schema.js';

/** What validation found: errors refuse the rules, warnings only inform. */
export interface Validation {
  readonly errors: Finding[];
  readonly warnings: Finding[];
  /** Present only when there are no errors. */
  readonly value?: { readonly domain: string; readonly rules: ParsedRule[] };
}

/**
 * Validates a rules document as plain data, reporting every problem: shape (zod, rule by rule so that one bad rule
 * does not hide the next), meaning inside each rule, then names and overrides across rules. Warnings are computed
 * only when `today` is given.
 */
export function validateRules(input: unknown, today?: string): Validation {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { errors: [{ path: [], message: 'expected a map with domain and rules' }], warnings: [] };
  }
  const top = documentSchema.safeParse(input);
  const errors = top.success ? [] : findingsFromIssues(top.error.issues, input, []);
  const rawRules = top.success ? top.data.rules : rulesOf(input);
  const valid = new Map<number, ParsedRule>();
  const warnings: Finding[] = [];
  rawRules.forEach((raw, index) => {
    const at = ['rules', index];
    const parsed = ruleSchema.safeParse(raw);
    errors.push(...checkRawMatch(raw, at));
    if (!parsed.success) {
      errors.push(...findingsFromIssues(parsed.error.issues, raw, at));
      return;
    }
    valid.set(index, parsed.data);
    errors.push(...checkRule(parsed.data, at, raw));
    if (today !== undefined) warnings.push(...warnRule(parsed.data, at, today));
  });
  const nameOf = textField(rawRules, 'name');
  errors.push(
    ...checkDuplicateNames(rawRules.length, nameOf),
    ...checkOverrides(rawRules.length, nameOf, textField(rawRules, 'overrides')),
    ...checkExemptNames(rawRules, nameOf),
  );
  if (errors.length > 0 || !top.success) return { errors: byRule(errors), warnings };
  return { errors, warnings, value: { domain: top.data.domain, rules: [...valid.values()] } };
}

/** Orders findings rule by rule (top-level first), keeping their order within a rule; sorting is stable. */
function byRule(findings: Finding[]): Finding[] {
  const ruleIndex = (finding: Finding) =>
    finding.path[0] === 'rules' && typeof finding.path[1] === 'number' ? finding.path[1] : -1;
  return findings.sort((a, b) => ruleIndex(a) - ruleIndex(b));
}

/** Reads a text field of a raw rule; checks across rules use it so that rules with other errors take part. */
function textField(rules: readonly unknown[], field: 'name' | 'overrides') {
  return (index: number): string | undefined => {
    const value = (rules[index] as Record<string, unknown> | null | undefined)?.[field];
    return typeof value === 'string' ? value : undefined;
  };
}

/** The rules list of a document whose top level failed, so that its rules are still checked. */
function rulesOf(input: object): readonly unknown[] {
  const rules = (input as { rules?: unknown }).rules;
  return Array.isArray(rules) ? rules : [];
}

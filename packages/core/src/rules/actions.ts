import type { CompiledRule } from './contract.js';

/** What the action rules among a request's matched rules decide, before anything is counted. */
export interface ActionOutcome {
  /** The rules left to count (limit rules not exempted); empty when `decidedBy` is set. */
  readonly counted: readonly CompiledRule[];
  /** The enforcing deny rule that refuses the request, or the allow rule that exempts it from every rule. */
  readonly decidedBy?: CompiledRule;
  /** Shadow (or dry-run) deny rules that matched: reported as would-be denials, never acted on. */
  readonly shadowDenies: readonly CompiledRule[];
  /** Rules left out by an allow rule: rule name -> the allow rule's name. */
  readonly exempted: ReadonlyMap<string, string>;
}

/**
 * Applies `allow` and `deny` rules to the matched rules, in this order (the firewall order: the reviewed
 * exception wins over the block list, and a refusal needs no counting):
 * 1. an allow rule without `exempt` exempts the request from every other rule, deny rules included;
 * 2. allow rules with `exempt` lift the rules they name, deny rules included;
 * 3. an enforcing deny rule left refuses the request; nothing is counted;
 * 4. the limit rules left are counted. Shadow deny rules are reported beside them.
 */
export function resolveActions(matched: readonly CompiledRule[], dryRun: boolean): ActionOutcome {
  const exempted = new Map<string, string>();
  for (const rule of matched) {
    if (rule.action !== 'allow') continue;
    if (rule.exempt === undefined) return exemptAll(matched, rule);
    for (const name of rule.exempt) if (!exempted.has(name)) exempted.set(name, rule.name);
  }
  const counted: CompiledRule[] = [];
  const shadowDenies: CompiledRule[] = [];
  for (const rule of matched) {
    if (rule.action === 'allow' || exempted.has(rule.name)) continue;
    if (rule.action === undefined) counted.push(rule);
    else if (rule.mode === 'shadow' || dryRun) shadowDenies.push(rule);
    else return { counted: [], decidedBy: rule, shadowDenies, exempted };
  }
  return { counted, shadowDenies, exempted };
}

function exemptAll(matched: readonly CompiledRule[], allow: CompiledRule): ActionOutcome {
  const exempted = new Map<string, string>();
  for (const rule of matched)
    if (rule !== allow && rule.action !== 'allow') exempted.set(rule.name, allow.name);
  return { counted: [], decidedBy: allow, shadowDenies: [], exempted };
}

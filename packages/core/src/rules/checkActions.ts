import { closest } from '../base/show.js';
import type { FieldPath, Finding } from './findings.js';
import type { ParsedRule } from './schema.js';

/** Fields about counting: a deny or allow rule counts nothing, so any of them is a mistake. */
const COUNTING_FIELDS = [
  'limit',
  'key',
  'global',
  'algorithm',
  'cost',
  'rollout',
  'on_store_error',
  'scope',
  'partition_margin',
  'shards',
  'lease',
  'ban',
  'escalate',
  'penalty',
  'count',
  'settle',
  'retry_jitter',
  'adaptive',
  'priority',
  'idempotent',
] as const;

/**
 * Meaning of `action` inside one rule: a limit rule needs a limit; deny and allow rules take no counting
 * fields (read from the raw rule, as defaults fill the parsed one); only allow takes `exempt`; an allow rule
 * has no shadow mode, as it refuses nothing.
 */
export function checkAction(raw: unknown, rule: ParsedRule, at: FieldPath): Finding[] {
  const { action } = rule;
  if (action === 'limit') {
    const found: Finding[] = [];
    if (rule.limit === undefined)
      found.push({ path: [...at, 'limit'], message: 'missing required field "limit"' });
    if (rule.exempt !== undefined)
      found.push({ path: [...at, 'exempt'], message: 'exempt belongs to an allow rule (action: allow)' });
    return found;
  }
  const written = raw as Record<string, unknown>;
  const found: Finding[] = COUNTING_FIELDS.filter((field) => Object.hasOwn(written, field)).map((field) => ({
    path: [...at, field],
    message: `a ${action} rule counts nothing: remove ${field}`,
    atKey: true,
  }));
  if (action === 'deny' && rule.exempt !== undefined)
    found.push({ path: [...at, 'exempt'], message: 'exempt belongs to an allow rule (action: allow)' });
  if (action === 'allow' && rule.mode === 'shadow') {
    found.push({
      path: [...at, 'mode'],
      message: 'an allow rule refuses nothing, so it has no shadow mode: remove mode',
    });
  }
  if (rule.exempt?.includes(rule.name))
    found.push({ path: [...at, 'exempt'], message: 'a rule cannot exempt from itself' });
  return found;
}

/** Exempt lists that name no rule, checked across the file (raw, so rules with other errors still count). */
export function checkExemptNames(
  rules: readonly unknown[],
  nameOf: (index: number) => string | undefined,
): Finding[] {
  const names = rules.map((_, index) => nameOf(index)).filter((name) => name !== undefined);
  const known = new Set(names);
  const found: Finding[] = [];
  rules.forEach((raw, index) => {
    const exempt = (raw as { exempt?: unknown } | null)?.exempt;
    if (!Array.isArray(exempt)) return;
    exempt.forEach((target, position) => {
      if (typeof target !== 'string' || known.has(target)) return;
      const hint = closest(target, names);
      found.push({
        path: ['rules', index, 'exempt', position],
        message: `no rule is named "${target}"${hint ? ` (did you mean "${hint}"?)` : ''}`,
      });
    });
  });
  return found;
}

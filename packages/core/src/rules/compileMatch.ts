import { ADDRESS_FIELDS, formatRange, parseRange } from '../net/address.js';
import type { CompiledRule, MatchCondition } from './contract.js';
import type { MatchSpec, ParsedRule } from './schema.js';

type CompiledMatch = Pick<CompiledRule, 'match' | 'conditions'>;

/**
 * Splits a rule's match into plain equality (`match`, indexed by value as before) and `conditions`: address
 * fields (whose values become canonical CIDR ranges), lists and negations. `conditions` is left out when
 * there are none, so rules without them compile (and hash) as they always did.
 */
export function compileMatch(spec: ParsedRule['match']): CompiledMatch {
  const match: Record<string, readonly string[]> = {};
  const conditions: Record<string, MatchCondition> = {};
  for (const [field, value] of Object.entries(spec)) {
    if (isPlain(value) && !ADDRESS_FIELDS.has(field)) match[field] = valuesOf(value, false);
    else conditions[field] = conditionOf(field, value, false);
  }
  return Object.keys(conditions).length === 0 ? { match } : { match, conditions };
}

function isPlain(
  value: MatchSpec,
): value is string | number | boolean | readonly (string | number | boolean)[] {
  return value === null || typeof value !== 'object' || Array.isArray(value);
}

function conditionOf(field: string, value: MatchSpec, not: boolean): MatchCondition {
  if (isPlain(value)) return { values: valuesOf(value, ADDRESS_FIELDS.has(field)), not };
  if ('not' in value) return conditionOf(field, value.not, true);
  return { values: [], list: value.list, not };
}

/** Distinct values as text; address values as canonical ranges (validation has checked them). */
function valuesOf(
  value: string | number | boolean | readonly (string | number | boolean)[],
  address: boolean,
) {
  const texts = [value].flat().map(String);
  const canonical = address ? texts.map(canonicalRange) : texts;
  return [...new Set(canonical)];
}

function canonicalRange(text: string): string {
  const range = parseRange(text);
  return typeof range === 'string' ? text : formatRange(range);
}

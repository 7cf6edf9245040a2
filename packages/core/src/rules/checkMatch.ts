import { ADDRESS_FIELDS, parseRange } from '../net/address.js';
import type { FieldPath, Finding } from './findings.js';
import type { MatchSpec, ParsedRule } from './schema.js';

/**
 * Values of address fields (`ip`, `client_ip`) must be IP addresses or CIDR ranges: the tree matches them
 * against the client's address bits, never as text. Each bad one is reported at its own position.
 */
export function checkMatchRanges(rule: ParsedRule, at: FieldPath): Finding[] {
  const found: Finding[] = [];
  for (const [field, spec] of Object.entries(rule.match)) {
    if (!ADDRESS_FIELDS.has(field)) continue;
    for (const [value, path] of writtenValues(spec, [...at, 'match', field])) {
      const range = parseRange(String(value));
      if (typeof range === 'string') found.push({ path, message: range });
    }
  }
  return found;
}

/** The literal values of a match field with the path of each. */
function writtenValues(spec: MatchSpec, path: FieldPath): [value: unknown, path: FieldPath][] {
  if (Array.isArray(spec)) return spec.map((value, index) => [value, [...path, index]]);
  if (spec !== null && typeof spec === 'object') {
    if ('not' in spec) return writtenValues(spec.not, [...path, 'not']);
    return [];
  }
  return [[spec, path]];
}

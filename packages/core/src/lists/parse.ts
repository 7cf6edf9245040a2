import { type RuleProblem, RulesError } from '../errors.js';
import { parseRange } from './address.js';
import { ValueSet } from './valueSet.js';

/**
 * An entry that must be an address or CIDR range: digits and dots, or hex digits with a colon, optionally
 * with `/len`. Anything else (a tenant, an API key) is kept as text.
 */
const ADDRESS_LIKE = /^(?:[\d.]+|[\da-f.]*:[\da-f:.]*)(?:\/.*)?$/i;

/** One entry of a list and where it was written (1-based). */
export interface ListEntry {
  readonly text: string;
  readonly line: number;
  readonly column: number;
}

/**
 * Parses a list file: one value or CIDR range a line, `#` starts a comment, blank lines are skipped. A bad
 * address or range is a RulesError naming `source:line:column`; every bad line is reported, not the first.
 */
export function parseList(text: string, source: string): ValueSet {
  const entries: ListEntry[] = [];
  text.split('\n').forEach((raw, index) => {
    const hash = raw.indexOf('#');
    const content = hash === -1 ? raw : raw.slice(0, hash);
    const entry = content.trim();
    if (entry !== '') entries.push({ text: entry, line: index + 1, column: content.indexOf(entry) + 1 });
  });
  return buildList(entries, source);
}

/** The set of entries, after checking every address-like one is a valid address or range. */
export function buildList(entries: readonly ListEntry[], source: string): ValueSet {
  const problems: RuleProblem[] = [];
  for (const { text, line, column } of entries) {
    if (!ADDRESS_LIKE.test(text)) continue;
    const range = parseRange(text);
    if (typeof range === 'string') problems.push({ source, line, column, path: '', message: range });
  }
  if (problems.length > 0) throw new RulesError(problems);
  return new ValueSet(entries.map((entry) => entry.text));
}

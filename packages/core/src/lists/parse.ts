import { type RuleProblem, RulesError } from '../errors.js';
import { parseRange } from './address.js';
import { ValueSet } from './valueSet.js';

/**
 * An entry that must be an address or CIDR range: digits and dots, or hex digits with a colon, optionally
 * with `/len`. Anything else (a tenant, an API key) is kept as text.
 */
const ADDRESS_LIKE = /^(?:[\d.]+|[\da-f.]*:[\da-f:.]*)(?:\/.*)?$/i;

/**
 * Parses a list file: one value or CIDR range a line, `#` starts a comment, blank lines are skipped. A bad
 * address or range is a RulesError naming `source:line:column`; every bad line is reported, not the first.
 */
export function parseList(text: string, source: string): ValueSet {
  const entries: string[] = [];
  const problems: RuleProblem[] = [];
  text.split('\n').forEach((raw, index) => {
    const hash = raw.indexOf('#');
    const content = hash === -1 ? raw : raw.slice(0, hash);
    const entry = content.trim();
    if (entry === '') return;
    if (ADDRESS_LIKE.test(entry)) {
      const range = parseRange(entry);
      if (typeof range === 'string') {
        const column = content.indexOf(entry) + 1;
        problems.push({ source, line: index + 1, column, path: '', message: range });
        return;
      }
    }
    entries.push(entry);
  });
  if (problems.length > 0) throw new RulesError(problems);
  return new ValueSet(entries);
}

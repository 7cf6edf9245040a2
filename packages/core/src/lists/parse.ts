import { type RuleProblem, RulesError } from '../base/errors.js';
import { parseRange } from '../net/address.js';
import { type ValueSet, ValueSetBuilder } from './valueSet.js';

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
  return buildList(listEntries(text), source);
}

/** parseList in steps, for reloads while requests are served (see buildListInSteps). */
export function parseListInSteps(text: string, source: string): Promise<ValueSet> {
  return buildListInSteps(listEntries(text), source);
}

/** The entries of a list file with their positions. */
function listEntries(text: string): ListEntry[] {
  const entries: ListEntry[] = [];
  text.split('\n').forEach((raw, index) => {
    const hash = raw.indexOf('#');
    const content = hash === -1 ? raw : raw.slice(0, hash);
    const entry = content.trim();
    if (entry !== '') entries.push({ text: entry, line: index + 1, column: content.indexOf(entry) + 1 });
  });
  return entries;
}

/** Entries added between two yields to the event loop while a large list is built in the background. */
const CHUNK = 2000;

/** The set of entries, after checking every address-like one is a valid address or range. */
export function buildList(entries: readonly ListEntry[], source: string): ValueSet {
  const builder = new ValueSetBuilder();
  const problems: RuleProblem[] = [];
  addEntries(builder, problems, entries, source);
  return finish(builder, problems);
}

/**
 * buildList in steps of CHUNK entries with a yield to the event loop between them: a reload of 100,000
 * entries never holds up requests for more than one step.
 */
export async function buildListInSteps(entries: readonly ListEntry[], source: string): Promise<ValueSet> {
  const builder = new ValueSetBuilder();
  const problems: RuleProblem[] = [];
  for (let start = 0; start < entries.length; start += CHUNK) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    addEntries(builder, problems, entries.slice(start, start + CHUNK), source);
  }
  return finish(builder, problems);
}

function addEntries(
  builder: ValueSetBuilder,
  problems: RuleProblem[],
  entries: readonly ListEntry[],
  source: string,
): void {
  for (const { text, line, column } of entries) {
    if (!ADDRESS_LIKE.test(text)) {
      builder.addText(text);
      continue;
    }
    const range = parseRange(text);
    if (typeof range === 'string') problems.push({ source, line, column, path: '', message: range });
    else builder.addRange(range);
  }
}

function finish(builder: ValueSetBuilder, problems: readonly RuleProblem[]): ValueSet {
  if (problems.length > 0) throw new RulesError(problems);
  return builder.build();
}

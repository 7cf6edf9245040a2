import { ConfigError } from '../base/errors.js';
import type { ValueList } from './contract.js';
import { buildList, buildListInSteps, type ListEntry } from './parse.js';
import type { ValueSet } from './valueSet.js';

/**
 * A fixed list given in code (values and CIDR ranges), for tests and lists that never change. A bad range
 * throws a RulesError naming `source` (default `<valueList>`) and the entry's position.
 */
export function valueList(entries: readonly string[], source = '<valueList>'): ValueList {
  if (!Array.isArray(entries) || entries.some((entry) => typeof entry !== 'string'))
    throw new ConfigError('valueList takes a list of strings');
  return { current: buildList(positioned(entries), source) };
}

/**
 * The set of `entries` built in steps, yielding to the event loop between them (for a list refreshed while
 * requests are served, as redisList does). A bad range rejects with a RulesError naming `source`.
 */
export function valueSetInSteps(entries: readonly string[], source: string): Promise<ValueSet> {
  return buildListInSteps(positioned(entries), source);
}

/** Entries are taken whole (no comments): a bad one is placed at its position, counted from 1. */
function positioned(entries: readonly string[]): ListEntry[] {
  return entries.map((text, index) => ({ text: text.trim(), line: index + 1, column: 1 }));
}

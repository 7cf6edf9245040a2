import { ConfigError } from '../errors.js';
import type { ValueList } from '../types.js';
import { buildList } from './parse.js';

/**
 * A fixed list given in code (values and CIDR ranges), for tests and lists that never change. A bad range
 * throws a RulesError naming `source` (default `<valueList>`) and the entry's position.
 */
export function valueList(entries: readonly string[], source = '<valueList>'): ValueList {
  if (!Array.isArray(entries) || entries.some((entry) => typeof entry !== 'string'))
    throw new ConfigError('valueList takes a list of strings');
  // Entries are taken whole (no comments): a bad one is placed at its position, counted from 1.
  const current = buildList(
    entries.map((text, index) => ({ text: text.trim(), line: index + 1, column: 1 })),
    source,
  );
  return { current };
}

import { ConfigError } from '../errors.js';
import type { ValueList } from '../types.js';
import { parseList } from './parse.js';

/** A fixed list given in code (values and CIDR ranges), for tests and lists that never change. */
export function valueList(entries: readonly string[]): ValueList {
  if (!Array.isArray(entries) || entries.some((entry) => typeof entry !== 'string'))
    throw new ConfigError('valueList takes a list of strings');
  // One entry a line, so a bad range is reported as the file parser reports it.
  const current = parseList(entries.map((entry) => entry.replaceAll('\n', ' ')).join('\n'), '<valueList>');
  return { current };
}

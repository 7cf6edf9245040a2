import { ConfigError } from './errors.js';
import { closest } from './show.js';

/**
 * Refuses an options object with a name its owner does not know, with a did-you-mean:
 * `new RedisStore({timeoutMS})` must not silently run on the default time limit.
 */
export function checkOptionNames(owner: string, options: object | undefined, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  const unknown = Object.keys(options).filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  throw new ConfigError(`${owner}: ${unknown.map((name) => unknownName(name, known)).join('; ')}`);
}

function unknownName(name: string, known: readonly string[]): string {
  const hint = closest(name, known);
  return hint === undefined
    ? `unknown option "${name}"`
    : `unknown option "${name}" (did you mean "${hint}"?)`;
}

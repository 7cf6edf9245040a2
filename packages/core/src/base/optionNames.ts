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

/** How {@link unknownName} words its message. */
export interface UnknownNameOptions {
  /** What the name is: `option` (default), `command`, `field`. */
  readonly kind?: string;
  /** When no known name is close, list them all (a short, fixed set such as a program's commands). */
  readonly listKnown?: boolean;
}

/**
 * The one wording of a name nobody knows, with a did-you-mean: `unknown option "timeoutMS" (did you mean
 * "timeoutMs"?)`; with `listKnown`, `unknown command "zz" (commands: validate, explain)` when none is close.
 */
export function unknownName(
  name: string,
  known: readonly string[],
  options: UnknownNameOptions = {},
): string {
  const { kind = 'option', listKnown = false } = options;
  const said = `unknown ${kind} "${name}"`;
  const hint = closest(name, known);
  if (hint !== undefined) return `${said} (did you mean "${hint}"?)`;
  if (!listKnown || known.length === 0) return said;
  return `${said} (${kind}s: ${known.join(', ')})`;
}

/**
 * Gathers the ConfigErrors of the checks of one options tree, so that one error names every wrong option:
 * `gather(check)` runs one (undefined when it threw), `gather.done()` throws what was found, if anything.
 */
export function problemGatherer(): { <T>(check: () => T): T | undefined; done(): void } {
  const problems: ConfigError[] = [];
  const gather = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(error);
      return undefined;
    }
  };
  const done = (): void => {
    if (problems.length === 1) throw problems[0];
    if (problems.length > 1) throw new ConfigError(problems.map((problem) => problem.message).join('; '));
  };
  return Object.assign(gather, { done });
}

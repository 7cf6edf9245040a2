import { readFile, stat } from 'node:fs/promises';
import { formatProblem, type Lists, MAX_LIST_BYTES, parseList, RulesError, valueList } from '@sluice/core';
import type { CompiledRules, ValueList } from '@sluice/core/store';
import { listOption, type ParsedArgs } from './args.js';
import { describeFsError, EXIT, type ExitCode, type Io, UsageError } from './io.js';
import { countOf } from './rulesFile.js';

/** The repeatable `--list name=file` option of the commands that build a limiter. */
export const LIST_OPTION = { list: { type: 'string', multiple: true } } as const;

/** `--list` in a command's help, its description starting at `column` as the command's other options do. */
export function listHelp(column: number): string {
  const indent = ' '.repeat(column);
  return [
    `${'  --list <name=file>'.padEnd(column)}a list the rules name (repeatable), one value or CIDR a line;`,
    `${indent}read once. A list the rules name and not given is empty (matches nothing): warned`,
  ].join('\n');
}

/** `name=file` pairs, checked: each name once, neither half empty. */
function listFiles(specs: readonly string[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const spec of specs) {
    const at = spec.indexOf('=');
    if (at <= 0 || at === spec.length - 1) throw new UsageError(`--list takes name=file, got "${spec}"`);
    const name = spec.slice(0, at);
    if (files.has(name)) throw new UsageError(`--list ${name} is given twice`);
    files.set(name, spec.slice(at + 1));
  }
  return files;
}

/** One list file read and parsed once (no watching: a command's run sees one version); problems printed. */
async function readListFile(path: string, io: Io): Promise<ValueList | ExitCode> {
  let text: string;
  try {
    const { size } = await stat(path);
    if (size > MAX_LIST_BYTES) {
      io.err(`${path}: ${size} bytes; a list file is at most ${MAX_LIST_BYTES} bytes (64 MiB)`);
      return EXIT.usage;
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    io.err(describeFsError(path, error));
    return EXIT.usage;
  }
  try {
    return { current: parseList(text, path) };
  } catch (error) {
    if (!(error instanceof RulesError)) throw error;
    for (const problem of error.problems) io.err(formatProblem(problem));
    io.err(`${path}: ${countOf(error.problems.length, 'error')}`);
    return EXIT.usage;
  }
}

/**
 * The lists for a limiter on these rule tables: each `--list` file read once, and every other list the rules name
 * empty, with a one-line warning on stderr (so a replay of rules with a block list still runs, and says so). A
 * list no table names is warned about too (a typo would otherwise leave the named one empty). On a bad `--list`
 * file prints why and returns exit code 2.
 */
export async function listsOf(
  parsed: ParsedArgs,
  tables: readonly CompiledRules[],
  command: string,
  io: Io,
): Promise<Lists | ExitCode> {
  const files = listFiles(listOption(parsed, 'list'));
  const named = new Set(tables.flatMap((table) => table.lists ?? []));
  const lists: Record<string, ValueList> = {};
  for (const [name, path] of files) {
    const list = await readListFile(path, io);
    if (typeof list === 'number') return list;
    lists[name] = list;
    if (!named.has(name)) io.err(`sluice ${command}: warning: --list ${name}: no rule names this list`);
  }
  const missing = [...named].filter((name) => !files.has(name));
  for (const name of missing) lists[name] = valueList([]);
  if (missing.length > 0) {
    const what = missing.length === 1 ? 'list' : 'lists';
    io.err(
      `sluice ${command}: warning: the rules name the ${what} ${missing.join(', ')}, not given (--list name=file): empty here, matching nothing`,
    );
  }
  return lists;
}

/** Names of the lists {@link listsOf} made empty: named by the rules, not given with `--list`. */
export function emptyLists(parsed: ParsedArgs, table: CompiledRules): string[] {
  const given = listFiles(listOption(parsed, 'list'));
  return (table.lists ?? []).filter((name) => !given.has(name));
}

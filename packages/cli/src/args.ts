import { type ParseArgsConfig, parseArgs } from 'node:util';
import { unknownName } from '@sluice/core';
import { UsageError } from './io.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parsed arguments: option values by name and positionals. */
export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * node:util parseArgs, strict, with its errors turned into UsageErrors; an unknown flag is named with a
 * did-you-mean (or the command's flags when none is close). `taken`: flags the command took out of the arguments
 * itself (replay's two-value `--compare`), known for the did-you-mean.
 */
export function parseCommandArgs(
  args: readonly string[],
  options: Options,
  taken: readonly string[] = [],
): ParsedArgs {
  const all: Options = { ...options, help: { type: 'boolean', short: 'h' } };
  checkFlagNames(args, all, taken);
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: all,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedArgs['values'], positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Refuses the first flag the command does not know, before parseArgs words it without a suggestion. */
function checkFlagNames(args: readonly string[], options: Options, taken: readonly string[]): void {
  const { tokens } = parseArgs({
    args: [...args],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const names = [...Object.keys(options), ...taken];
  // A known short flag comes back under its long name; an unknown one (`-x`) as itself.
  const unknown = tokens.find((token) => token.kind === 'option' && !names.includes(token.name));
  if (unknown?.kind === 'option') {
    const flags = names.map((name) => `--${name}`);
    throw new UsageError(unknownName(unknown.rawName, flags, { listKnown: true }));
  }
}

/** A string option's value, if given. */
export function stringOption(parsed: ParsedArgs, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A whole, positive number option, or the default. */
export function countOption(parsed: ParsedArgs, name: string, fallback: number): number {
  const text = stringOption(parsed, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`--${name} must be a whole number above 0`);
  return value;
}

/** A `YYYY-MM-DD` option, checked. */
export function dateOption(parsed: ParsedArgs, name: string): string | undefined {
  const text = stringOption(parsed, name);
  if (text !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    throw new UsageError(`--${name} must be a date (YYYY-MM-DD), got "${text}"`);
  }
  return text;
}

/** A repeatable string option's values (`--field a=b --field c=d`), in order. */
export function listOption(parsed: ParsedArgs, name: string): readonly string[] {
  const value = parsed.values[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

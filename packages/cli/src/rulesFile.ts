import { readFile } from 'node:fs/promises';
import { compileRules, formatProblem, loadRules, type RulesDocument, RulesError } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { isEnvoyConfig, parseEnvoyConfig } from '@sluice/envoy';
import { describeFsError, EXIT, type ExitCode, type Io, UsageError } from './io.js';

/** A rules file's format: Sluice's, or envoyproxy/ratelimit's config (`domain` and nested `descriptors`). */
export type RulesFormat = 'sluice' | 'envoy';

/** A rules file read, validated and compiled. */
export interface LoadedRules {
  readonly format: RulesFormat;
  /** Sluice's format: the document, with its warnings (overdue reviews, missing owners). */
  readonly document?: RulesDocument;
  readonly rules: CompiledRules;
  /** Envoy's format: rule name -> the rules its `replaces` leaves out when both match one call. */
  readonly replaces: ReadonlyMap<string, readonly string[]>;
}

/** The `--format` option's help line, its text starting at column `width` as the command's other options'. */
export const formatHelp = (width: number): string =>
  `${'--format <f>'.padEnd(width - 2)}sluice, envoy (an envoyproxy/ratelimit config) or auto (default: told by its top fields)`;

/** The `--format` option: `auto` (the default) tells the formats apart by their top-level fields. */
export function formatOption(value: string | undefined): RulesFormat | 'auto' {
  if (value === undefined || value === 'auto' || value === 'sluice' || value === 'envoy')
    return value ?? 'auto';
  throw new UsageError(`--format must be sluice, envoy or auto, got "${value}"`);
}

/**
 * Loads and compiles a rules file, of Sluice's format or envoyproxy/ratelimit's. On failure prints why and
 * returns the exit code: 1 for invalid rules (every problem with file:line:column), 2 for a file that cannot
 * be read.
 */
export async function loadChecked(
  path: string,
  io: Io,
  today?: string,
  format: RulesFormat | 'auto' = 'auto',
): Promise<LoadedRules | ExitCode> {
  try {
    const text = format === 'sluice' ? undefined : await readFile(path, 'utf8');
    if (text !== undefined && (format === 'envoy' || isEnvoyConfig(text))) {
      const envoy = parseEnvoyConfig(text, path);
      return { format: 'envoy', rules: envoy.table, replaces: envoy.replaces };
    }
    const document = await loadRules(path, today ? { today } : {});
    return { format: 'sluice', document, rules: compileRules(document), replaces: new Map() };
  } catch (error) {
    if (error instanceof RulesError) {
      for (const problem of error.problems) io.err(formatProblem(problem));
      io.err(`${path}: ${countOf(error.problems.length, 'error')}`);
      return EXIT.findings;
    }
    io.err(describeFsError(path, error));
    return EXIT.usage;
  }
}

/** `1 error`, `3 errors`. */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Milliseconds as the rules file would write them: `60s`, `1h`, `500ms`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  for (const [size, unit] of units) if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

import { compileRules, formatProblem, loadRules, type RulesDocument, RulesError } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { describeFsError, EXIT, type ExitCode, type Io } from './io.js';

/** A rules file read, validated and compiled. */
export interface LoadedRules {
  readonly document: RulesDocument;
  readonly rules: CompiledRules;
}

/**
 * Loads and compiles a rules file. On failure prints why and returns the exit code: 1 for invalid rules (every
 * problem with file:line:column), 2 for a file that cannot be read.
 */
export async function loadChecked(path: string, io: Io, today?: string): Promise<LoadedRules | ExitCode> {
  try {
    const document = await loadRules(path, today ? { today } : {});
    return { document, rules: compileRules(document) };
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

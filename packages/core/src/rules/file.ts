import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { RulesError } from '../errors.js';

/** Largest rules file or text accepted (1 MiB): thousands of rules, and a bound on what a reload can cost. */
export const MAX_RULES_BYTES = 1024 * 1024;

/** The refusal of rules text over MAX_RULES_BYTES, named against its source. */
export function rulesTooLarge(source: string, bytes: number): RulesError {
  return new RulesError([
    {
      source,
      line: 0,
      column: 0,
      path: '',
      message: `the rules are ${bytes} bytes; the limit is ${MAX_RULES_BYTES} bytes (1 MiB)`,
    },
  ]);
}

/**
 * Reads a rules file as UTF-8, refusing one over MAX_RULES_BYTES before reading it. A missing file's error
 * (code ENOENT, kept) names the working directory a relative path was resolved against.
 */
export async function readRulesFile(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw withWorkingDirectory(path, error);
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_RULES_BYTES) throw rulesTooLarge(path, size);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** readRulesFile for synchronous start-up code. */
export function readRulesFileSync(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw withWorkingDirectory(path, error);
  }
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_RULES_BYTES) throw rulesTooLarge(path, size);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** A "no such file" for a relative path says where it was looked for: the usual start-up surprise. */
function withWorkingDirectory(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ENOENT' || isAbsolute(path) || !(error instanceof Error)) return error;
  error.message += ` (${JSON.stringify(path)} was resolved against the working directory ${process.cwd()})`;
  return error;
}

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { ConfigError, RulesError } from '../base/errors.js';

/**
 * Default largest rules file or text accepted (16 MiB): 20,000 tenant overrides take about 2.5 MB, and a bound
 * on what a reload can cost. The `maxBytes` option of the loaders changes it.
 */
export const MAX_RULES_BYTES = 16 * 1024 * 1024;

/** The `maxBytes` option as given, or the default; anything but a positive whole number is refused. */
export function maxRulesBytes(maxBytes: number | undefined): number {
  if (maxBytes === undefined) return MAX_RULES_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw new ConfigError(`maxBytes must be a positive whole number of bytes, got ${String(maxBytes)}`);
  return maxBytes;
}

/** The refusal of rules text over `max` bytes, named against its source. */
export function rulesTooLarge(source: string, bytes: number, max: number): RulesError {
  return new RulesError([
    {
      source,
      line: 0,
      column: 0,
      path: '',
      message: `the rules are ${bytes} bytes; the limit is ${max} bytes (the maxBytes option)`,
    },
  ]);
}

/**
 * Reads a rules file as UTF-8, refusing one over `maxBytes` (its size on disk) before reading any of it. A missing file's error
 * (code ENOENT, kept) names the working directory a relative path was resolved against.
 */
export async function readRulesFile(path: string, maxBytes = MAX_RULES_BYTES): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw withWorkingDirectory(path, error);
  }
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw rulesTooLarge(path, size, maxBytes);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** readRulesFile for synchronous start-up code. */
export function readRulesFileSync(path: string, maxBytes = MAX_RULES_BYTES): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw withWorkingDirectory(path, error);
  }
  try {
    const { size } = fstatSync(fd);
    if (size > maxBytes) throw rulesTooLarge(path, size, maxBytes);
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

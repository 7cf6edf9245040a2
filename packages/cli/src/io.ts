import { readFile } from 'node:fs/promises';
import { progressWriter, type TerminalStream } from './progressLine.js';

/** Exit codes of every command. */
export const EXIT = {
  /** Done; nothing wrong found. */
  ok: 0,
  /** The command ran and found problems: invalid rules, failed cases, a publish that failed. */
  findings: 1,
  /** The command could not run: bad arguments, an unreadable file, an invalid cases file. */
  usage: 2,
} as const;

/** One of {@link EXIT}'s codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Where a command writes: lines to stdout and stderr. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** A transient status line, redrawn in place on a terminal; absent when output is not a terminal. */
  progress?(line: string): void;
}

/**
 * An Io writing lines to `out` and `err`, with progress on `err` when it is a terminal and `env` is not CI's
 * (progressLine.ts).
 */
export function streamIo(
  out: TerminalStream,
  err: TerminalStream,
  env: Readonly<Record<string, string | undefined>>,
): Io {
  const progress = progressWriter(err, env);
  return {
    out: (line) => out.write(`${line}\n`),
    err: (line) => err.write(`${line}\n`),
    ...(progress ? { progress } : {}),
  };
}

/** An Io on the process's streams. */
export const processIo: Io = streamIo(process.stdout, process.stderr, process.env);

/** A command used wrongly; main prints it with the command's usage line and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One `sluice` subcommand. */
export interface Command {
  readonly name: string;
  /** One line for `sluice --help`. */
  readonly summary: string;
  /** Full `--help` text. */
  readonly help: string;
  run(args: readonly string[], io: Io): Promise<ExitCode>;
}

/** The message of a file system error, without Node's stack-ish prefix. */
export function describeFsError(path: string, error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'ENOENT') return `${path}: no such file`;
  if (code === 'EISDIR') return `${path}: is a directory`;
  if (code === 'EACCES') return `${path}: permission denied`;
  return `${path}: ${error instanceof Error ? error.message : String(error)}`;
}

/** A file's text, or EXIT.usage once why it cannot be read is said on stderr. */
export async function readTextFile(path: string, io: Io): Promise<string | typeof EXIT.usage> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    io.err(describeFsError(path, error));
    return EXIT.usage;
  }
}

import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../base/errors.js';
import { watchText } from '../base/fileWatch.js';
import { checkOptionNames } from '../base/optionNames.js';
import type { ValueList } from './contract.js';
import { parseList, parseListInSteps } from './parse.js';
import type { ValueSet } from './valueSet.js';

/** Largest list file read (64 MiB): millions of entries, and a bound on what a reload can cost. */
export const MAX_LIST_BYTES = 64 * 1024 * 1024;

/** Options of {@link fileList}. */
export interface FileListOptions {
  /** Quiet time after the last change before the file is read again, in ms; default 100. */
  readonly debounceMs?: number;
  /** Told of each reload that failed (unreadable file, bad line); the last good list stays in force. */
  readonly onError?: (error: Error) => void;
  /** Told of each new list put in force. */
  readonly onReload?: (list: ValueSet) => void;
}

const FILE_LIST_OPTIONS: readonly (keyof FileListOptions)[] = ['debounceMs', 'onError', 'onReload'];

/** A list read from a file and reloaded when it changes. */
export interface FileList extends ValueList {
  /** Reads the file now; resolves once the new list is in force or the error has been reported. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A list from a file: one value or CIDR range a line, `#` comments. Read now (a bad file throws a RulesError
 * with file:line:column), then reloaded when it changes, like `watchRules`: a broken file is reported to
 * `onError` and the last good list stays in force.
 */
export function fileList(path: string, options: FileListOptions = {}): FileList {
  checkOptionNames('fileList', options, FILE_LIST_OPTIONS);
  if (typeof path !== 'string' || path === '')
    throw new ConfigError('fileList needs the path of a list file');
  const file = resolve(path);
  const initialText = readListSync(file);
  let current = parseList(initialText, path);
  const watched = watchText(file, {
    debounceMs: options.debounceMs ?? 100,
    initialText,
    read: readList,
    async onText(text) {
      // Built in steps: a large list reloads without holding up the requests served meanwhile.
      current = await parseListInSteps(text, path);
      options.onReload?.(current);
    },
    onError: (error) => options.onError?.(error),
  });
  return {
    get current() {
      return current;
    },
    reload: watched.reload,
    close: watched.close,
  };
}

function readListSync(file: string): string {
  const text = readFileSync(file, 'utf8');
  if (text.length > MAX_LIST_BYTES) throw tooLarge(file, text.length);
  return text;
}

async function readList(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_LIST_BYTES) throw tooLarge(file, size);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

function tooLarge(file: string, size: number): ConfigError {
  return new ConfigError(`the list ${file} is ${size} bytes; the limit is ${MAX_LIST_BYTES} bytes (64 MiB)`);
}

import { resolve } from 'node:path';
import { watchText } from '../base/fileWatch.js';
import { checkOptionNames } from '../base/optionNames.js';
import { compileRules } from './compile.js';
import type { CompiledRules, RulesSource } from './contract.js';
import { maxRulesBytes, readRulesFile, readRulesFileSync } from './file.js';
import { parseRules } from './parse.js';

/** Options of {@link watchRules}. */
export interface WatchRulesOptions {
  /** Quiet time after the last change before the file is read again, in ms; default 100. */
  readonly debounceMs?: number;
  /** `YYYY-MM-DD` against which review dates are judged (warnings only); default today (UTC). */
  readonly today?: string;
  /** Largest rules file accepted, in bytes, judged by its size before it is read; default 16 MiB. */
  readonly maxBytes?: number;
}

/** A RulesSource reading a file, with `reload()` to check the file now (what a change event triggers). */
export interface WatchedRules extends RulesSource {
  /** Reads the file now; resolves once the new table is in force or the error has been reported. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

interface Subscriber {
  readonly onRules: (rules: CompiledRules) => void;
  readonly onError: ((error: Error) => void) | undefined;
}

/**
 * Loads a rules file now (throwing RulesError if it is invalid) and reloads it when it changes: the new text is
 * parsed and compiled to the side and swapped in only if good. A broken file is reported to subscribers'
 * `onError` (the RulesError text has file:line:column) and the last good version stays in force.
 *
 * The directory is watched, not the file, so editors and deploy tools that replace the file (write a copy, then
 * rename it over; Kubernetes' symlink swap) are seen too. The watcher does not keep the process alive.
 */
export function watchRules(path: string, options: WatchRulesOptions = {}): WatchedRules {
  checkOptionNames('watchRules', options, ['debounceMs', 'today', 'maxBytes']);
  const file = resolve(path);
  const maxBytes = maxRulesBytes(options.maxBytes);
  const compile = (text: string) =>
    compileRules(
      parseRules(text, { source: path, maxBytes, ...(options.today ? { today: options.today } : {}) }),
    );
  const initialText = readRulesFileSync(file, maxBytes);
  let current = compile(initialText);
  const subscribers = new Set<Subscriber>();

  const watched = watchText(file, {
    debounceMs: options.debounceMs ?? 100,
    initialText,
    read: (name) => readRulesFile(name, maxBytes),
    onText(text) {
      const next = compile(text);
      if (next.version === current.version) return;
      current = next;
      for (const s of subscribers) s.onRules(next);
    },
    onError(error) {
      for (const s of subscribers) s.onError?.(error);
    },
  });

  return {
    get current() {
      return current;
    },
    subscribe(onRules, onError) {
      const subscriber = { onRules, onError };
      subscribers.add(subscriber);
      return () => subscribers.delete(subscriber);
    },
    reload: watched.reload,
    async close() {
      subscribers.clear();
      await watched.close();
    },
  };
}

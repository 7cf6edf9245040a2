import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { CompiledRules, RulesSource } from '../types.js';
import { compileRules } from './compile.js';
import { readRulesFile, readRulesFileSync } from './file.js';
import { parseRules } from './parse.js';

/** Options of {@link watchRules}. */
export interface WatchRulesOptions {
  /** Quiet time after the last change before the file is read again, in ms; default 100. */
  readonly debounceMs?: number;
  /** `YYYY-MM-DD` against which review dates are judged (warnings only); default today (UTC). */
  readonly today?: string;
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
  const file = resolve(path);
  const debounceMs = options.debounceMs ?? 100;
  const compile = (text: string) =>
    compileRules(parseRules(text, { source: path, ...(options.today ? { today: options.today } : {}) }));
  let lastText = readRulesFileSync(file);
  let current = compile(lastText);
  const subscribers = new Set<Subscriber>();
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();

  function report(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    for (const s of subscribers) s.onError?.(failure);
  }

  async function readAndSwap(): Promise<void> {
    let text: string;
    try {
      text = await readRulesFile(file);
    } catch (error) {
      report(error);
      return;
    }
    // Editors fire several events per save, and other files in the directory fire too: only a new text counts.
    if (text === lastText) return;
    lastText = text;
    let next: CompiledRules;
    try {
      next = compile(text);
    } catch (error) {
      report(error);
      return;
    }
    if (next.version === current.version) return;
    current = next;
    for (const s of subscribers) s.onRules(next);
  }

  // Reads run one after another, so that an older read can never swap in after a newer one.
  const reload = (): Promise<void> => {
    reading = reading.then(readAndSwap);
    return reading;
  };

  const watcher: FSWatcher = watch(dirname(file), { persistent: false }, (_event, name) => {
    if (name !== null && name !== basename(file) && !name.startsWith('..')) return;
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), debounceMs);
    timer.unref();
  });
  watcher.on('error', report);

  return {
    get current() {
      return current;
    },
    subscribe(onRules, onError) {
      const subscriber = { onRules, onError };
      subscribers.add(subscriber);
      return () => subscribers.delete(subscriber);
    },
    reload,
    async close() {
      clearTimeout(timer);
      watcher.close();
      subscribers.clear();
      await reading;
    },
  };
}

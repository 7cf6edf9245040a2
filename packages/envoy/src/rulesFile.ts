/**
 * A rules file the service serves: Sluice's format or envoyproxy/ratelimit's, told apart by their top-level
 * fields; watched and reloaded, the last good version kept when a new one is broken.
 */
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { compileRules, MAX_RULES_BYTES, parseRules, RulesError } from '@sluice/core';
import { type EnvoyRules, isEnvoyConfig, parseEnvoyConfig } from './envoyConfig.js';

/** Compiles rules text of either format; problems name `source`, line and field. */
export function compileRulesText(text: string, source: string): EnvoyRules {
  if (Buffer.byteLength(text) > MAX_RULES_BYTES)
    throw new RulesError([
      { source, line: 0, column: 0, path: '', message: `over ${MAX_RULES_BYTES} bytes` },
    ]);
  if (isEnvoyConfig(text)) return parseEnvoyConfig(text, source);
  return { table: compileRules(parseRules(text, { source })), replaces: new Map() };
}

/** Loads a rules file of either format now. */
export function loadRulesFile(path: string): EnvoyRules {
  return compileRulesText(readFileSync(path, 'utf8'), path);
}

/** A watch on a rules file; `reload()` reads it now (what a change triggers). */
export interface RulesWatch {
  reload(): Promise<void>;
  close(): void;
}

/**
 * Watches the file's directory (editors and Kubernetes replace files rather than write them) and hands each
 * new good version to `onRules`, each broken one to `onError`. The watcher keeps no process alive.
 */
export function watchRulesFile(
  path: string,
  onRules: (rules: EnvoyRules) => void,
  onError: (error: Error) => void,
  debounceMs = 100,
): RulesWatch {
  const file = resolve(path);
  let timer: NodeJS.Timeout | undefined;
  let last = '';
  const reload = async (): Promise<void> => {
    try {
      const text = await readFile(file, 'utf8');
      if (text === last) return;
      const rules = compileRulesText(text, path);
      last = text;
      onRules(rules);
    } catch (error) {
      onError(error instanceof Error ? error : new Error(String(error)));
    }
  };
  let watcher: FSWatcher | undefined;
  try {
    last = readFileSync(file, 'utf8');
    watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
      if (name !== null && name !== basename(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), debounceMs);
      timer.unref();
    });
  } catch (error) {
    onError(error instanceof Error ? error : new Error(String(error)));
  }
  return {
    reload,
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}

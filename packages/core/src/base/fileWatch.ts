import { type FSWatcher, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** A watched file: `reload()` reads it now; `close()` stops watching once the read in progress is done. */
export interface FileWatch {
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** What {@link watchText} reads with and reports to. */
export interface FileWatchOptions {
  /** Quiet time after the last change before the file is read again, in ms. */
  readonly debounceMs: number;
  /** The text the caller already holds: the same text read again is no change. */
  readonly initialText: string;
  readonly read: (file: string) => Promise<string>;
  /** Called with each new text, in order (awaited); a throw is reported to `onError` like a failed read. */
  readonly onText: (text: string) => void | Promise<void>;
  readonly onError: (error: Error) => void;
}

/**
 * Re-reads a file when it changes and hands over each new text. The directory is watched, not the file, so
 * editors and deploy tools that replace the file (write a copy, then rename it over; Kubernetes' symlink swap)
 * are seen too. Reads run one after another, so an older read never lands after a newer one. The watcher
 * does not keep the process alive.
 */
export function watchText(file: string, options: FileWatchOptions): FileWatch {
  let lastText = options.initialText;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();
  const report = (error: unknown) =>
    options.onError(error instanceof Error ? error : new Error(String(error)));

  async function readOnce(): Promise<void> {
    let text: string;
    try {
      text = await options.read(file);
    } catch (error) {
      report(error);
      return;
    }
    // Editors fire several events per save, and other files in the directory fire too: only a new text counts.
    if (text === lastText) return;
    lastText = text;
    try {
      await options.onText(text);
    } catch (error) {
      report(error);
    }
  }

  const reload = (): Promise<void> => {
    reading = reading.then(readOnce);
    return reading;
  };

  const watcher: FSWatcher = watch(dirname(file), { persistent: false }, (_event, name) => {
    if (name !== null && name !== basename(file) && !name.startsWith('..')) return;
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), options.debounceMs);
    timer.unref();
  });
  watcher.on('error', report);

  return {
    reload,
    async close() {
      clearTimeout(timer);
      watcher.close();
      await reading;
    },
  };
}

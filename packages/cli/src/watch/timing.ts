import { ConfigError, parseDuration } from '@sluice/core';
import { type ParsedArgs, stringOption } from '../args.js';
import { UsageError } from '../io.js';

/** The `--interval` option (a duration: 500ms, 2s, 1m), at least 100 ms; `fallback` ms when not given. */
export function intervalOption(parsed: ParsedArgs, fallback: number): number {
  const text = stringOption(parsed, 'interval');
  if (text === undefined) return fallback;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new UsageError(`--interval: ${error.message}`);
  }
  if (ms < 100) throw new UsageError('--interval must be at least 100ms');
  return ms;
}

/** Resolves at the first SIGINT or SIGTERM, its listeners then gone; made only by a viewer that stays on. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop).on('SIGTERM', stop);
  });
}

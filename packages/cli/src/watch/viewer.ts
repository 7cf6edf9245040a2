import { countOption, type ParsedArgs, stringOption } from '../args.js';
import { EXIT, type ExitCode, type Io, UsageError } from '../io.js';
import { loadReveal, type Reveal } from './reveal.js';
import { type FleetSource, openSource, SOURCE_OPTIONS } from './source.js';
import { intervalOption } from './timing.js';
import { SHOWN_KEYS } from './view.js';

/** The options `sluice top` and `sluice dashboard` share: the store, the interval, keys shown, reveal. */
export const VIEWER_OPTIONS = {
  ...SOURCE_OPTIONS,
  interval: { type: 'string' },
  keys: { type: 'string' },
  reveal: { type: 'string' },
} as const;

/** What a viewer reads with, from its options. */
export interface Viewer {
  readonly source: FleetSource;
  readonly reveal: Reveal | undefined;
  readonly intervalMs: number;
  readonly keys: number;
}

/** The viewer's options checked and its store connected; an exit code when that cannot be (said on `io`). */
export async function openViewer(parsed: ParsedArgs, command: string, io: Io): Promise<Viewer | ExitCode> {
  if (parsed.positionals.length > 0) throw new UsageError(`${command} takes no positional arguments`);
  const intervalMs = intervalOption(parsed, 2000);
  const keys = countOption(parsed, 'keys', SHOWN_KEYS);
  const revealFile = stringOption(parsed, 'reveal');
  const reveal = revealFile === undefined ? undefined : await loadReveal(revealFile);
  try {
    const source = await openSource(parsed, command, io);
    return source === undefined ? EXIT.usage : { source, reveal, intervalMs, keys };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    io.err(`${command}: cannot reach the store: ${(error as Error).message}`);
    return EXIT.findings;
  }
}

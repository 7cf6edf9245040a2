import type { Io } from '../io.js';
import { logLines } from './lines.js';
import type { LineParser } from './logLine.js';
import type { ReplayRequest } from './request.js';

/** Where parsed lines go: a replay or a comparison. */
export interface RequestSink {
  add(request: ReplayRequest): void;
  skip(kind: 'ignored' | 'unreadable'): void;
}

/** Lines between two looks at the clock for progress: reading the time on every line would cost more. */
const CHECK_EVERY = 16_384;
const PROGRESS_MS = 250;

/** One log being read: its lines and the next request it holds, parsed. */
interface Source {
  readonly path: string;
  readonly lines: AsyncGenerator<string>;
  next: ReplayRequest | undefined;
}

/** Counts lines and redraws the progress line on a terminal a few times a second. */
function progressMeter(io: Io): { tick(path: string): void; lines(): number } {
  const started = Date.now();
  // The first check always shows, so any log longer than CHECK_EVERY lines shows progress at least once.
  let lastShown = Number.NEGATIVE_INFINITY;
  let lines = 0;
  return {
    tick(path) {
      lines++;
      if (!io.progress || lines % CHECK_EVERY !== 0 || Date.now() - lastShown < PROGRESS_MS) return;
      lastShown = Date.now();
      const rate = Math.round(lines / Math.max(0.001, (lastShown - started) / 1000));
      io.progress(`${path}: ${lines.toLocaleString('en')} lines, ${rate.toLocaleString('en')} lines/s`);
    },
    lines: () => lines,
  };
}

/**
 * Streams every line of the files through the parser into the sink, merged by time: logs of several gateways,
 * each in time order, replay as one stream in time order. Memory stays flat: one request per file is held.
 * Returns the number of lines read.
 */
export async function feedLogs(
  paths: readonly string[],
  parse: LineParser,
  sink: RequestSink,
  io: Io,
): Promise<number> {
  const meter = progressMeter(io);
  /** Reads a source up to its next request, passing on the lines that give none. */
  async function advance(source: Source): Promise<void> {
    source.next = undefined;
    for (;;) {
      const line = await source.lines.next();
      if (line.done) return;
      meter.tick(source.path);
      if (line.value === '') continue;
      const request = parse(line.value);
      if (typeof request !== 'string') {
        source.next = request;
        return;
      }
      sink.skip(request);
    }
  }
  const sources: Source[] = paths.map((path) => ({ path, lines: logLines(path), next: undefined }));
  try {
    for (const source of sources) await advance(source);
    for (;;) {
      let earliest: Source | undefined;
      for (const source of sources) {
        if (
          source.next !== undefined &&
          (earliest?.next === undefined || source.next.time < earliest.next.time)
        ) {
          earliest = source;
        }
      }
      if (earliest?.next === undefined) break;
      sink.add(earliest.next);
      await advance(earliest);
    }
  } finally {
    for (const source of sources) await source.lines.return(undefined);
    io.progress?.('');
  }
  return meter.lines();
}

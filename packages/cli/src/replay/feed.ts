import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Io } from '../io.js';
import { startProgress } from '../progress.js';
import { logLines, type ReadPosition } from './lines.js';
import type { LineParser } from './logLine.js';
import type { ReplayRequest } from './request.js';

/** Where parsed lines go: a replay or a comparison. */
export interface RequestSink {
  add(request: ReplayRequest): void;
  skip(kind: 'ignored' | 'unreadable'): void;
}

/** Lines between two progress updates: reading the clock on every line would cost more than the line. */
const CHECK_EVERY = 4096;

/** One log being read: its lines and the next request it holds, parsed. */
interface Source {
  readonly path: string;
  readonly lines: AsyncGenerator<string>;
  readonly position: ReadPosition;
  next: ReplayRequest | undefined;
}

/** A line counter on the progress line, with the share of the files' bytes read for the time left. */
export interface LineMeter {
  tick(): void;
  lines(): number;
  end(): void;
}

/** Counts the lines of `paths` (read at `positions`, one per path) on the progress line. */
export function lineMeter(
  io: Io,
  paths: readonly string[],
  positions: readonly ReadPosition[],
  totalBytes: number,
): LineMeter {
  // The file's name, not its path: the line must fit the terminal, with the numbers after it.
  const label = paths.length === 1 ? basename(paths[0] ?? '') : `${paths.length} logs`;
  const progress = startProgress(io, { label, unit: 'lines' });
  let lines = 0;
  const fraction = () =>
    totalBytes > 0 ? positions.reduce((sum, position) => sum + position.bytes, 0) / totalBytes : undefined;
  return {
    tick(): void {
      lines++;
      if (lines % CHECK_EVERY === 0) progress.update(lines, fraction());
    },
    lines: () => lines,
    end: progress.end,
  };
}

/** The files' sizes added up, what "time left" is measured against; an unreadable file counts 0 (its read fails). */
export async function sizeOf(paths: readonly string[]): Promise<number> {
  const sizes = await Promise.all(
    paths.map((path) =>
      stat(path).then(
        (found) => found.size,
        () => 0,
      ),
    ),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
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
  const sources: Source[] = paths.map((path) => {
    const position = { bytes: 0 };
    return { path, lines: logLines(path, position), position, next: undefined };
  });
  const positions = sources.map((source) => source.position);
  const meter = lineMeter(io, paths, positions, await sizeOf(paths));
  /** Reads a source up to its next request, passing on the lines that give none. */
  async function advance(source: Source): Promise<void> {
    source.next = undefined;
    for (;;) {
      const line = await source.lines.next();
      if (line.done) return;
      meter.tick();
      if (line.value === '') continue;
      const request = parse(line.value);
      if (typeof request !== 'string') {
        source.next = request;
        return;
      }
      sink.skip(request);
    }
  }
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
    meter.end();
  }
  return meter.lines();
}

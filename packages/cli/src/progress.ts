import type { Io } from './io.js';

/** Redraws of the progress line at most this often: more is flicker and cost, fewer looks stuck. */
export const REDRAW_MS = 250;

/** What a long task shows: its name and the unit it counts. */
export interface ProgressLabel {
  /** Shown first: the file being read, the command. */
  readonly label: string;
  /** What `done` counts: lines, requests. */
  readonly unit: string;
}

/** A long task's progress line. */
export interface Progress {
  /**
   * `done` units so far and, when known, the share of the work done (0 to 1: bytes read of the files' size,
   * simulated time of the duration), for the time left. Redrawn at most every {@link REDRAW_MS}; the first call
   * always draws.
   */
  update(done: number, fraction?: number): void;
  /** Clears the line (the report follows). */
  end(): void;
}

/** A duration for people: 42s, 3m 05s, 1h 02m. */
export function formatLeft(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** The progress line's text: `access.log: 120,000 lines, 45,000 lines/s, 37%, 4s left`. */
export function progressText(
  what: ProgressLabel,
  done: number,
  elapsedMs: number,
  fraction?: number,
): string {
  const rate = Math.round(done / Math.max(0.001, elapsedMs / 1000));
  const parts = [
    `${what.label}: ${done.toLocaleString('en')} ${what.unit}`,
    `${rate.toLocaleString('en')} ${what.unit}/s`,
  ];
  if (fraction !== undefined && fraction > 0 && fraction <= 1) {
    parts.push(
      `${Math.floor(fraction * 100)}%`,
      `${formatLeft((elapsedMs * (1 - fraction)) / fraction)} left`,
    );
  }
  return parts.join(', ');
}

/** Progress of one task on `io`; does nothing (not even read the clock) when `io` draws no progress. */
export function startProgress(io: Io, what: ProgressLabel, clock: () => number = Date.now): Progress {
  const draw = io.progress;
  if (draw === undefined) return { update: () => {}, end: () => {} };
  const started = clock();
  let lastDrawn = Number.NEGATIVE_INFINITY;
  return {
    update(done, fraction) {
      const now = clock();
      if (now - lastDrawn < REDRAW_MS) return;
      lastDrawn = now;
      draw.call(io, progressText(what, done, now - started, fraction));
    },
    end: () => draw.call(io, ''),
  };
}

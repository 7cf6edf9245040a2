// How the progress line is drawn on a terminal, for any Io built on streams (io.ts); what a task shows on it
// is progress.ts's.

/** A stream progress may be drawn on: process.stderr, or a test's stand-in with the same fields. */
export interface TerminalStream {
  readonly isTTY?: boolean;
  /** Width of the terminal in characters (a TTY has it). */
  readonly columns?: number;
  write(text: string): boolean;
}

/** True when the environment says it is CI (`CI=true`, `CI=1`, ...; not `CI=false` or `0`). */
function inCi(env: Readonly<Record<string, string | undefined>>): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * The `progress` writer of an Io on `stream`: one line redrawn in place (`''` clears it), cut to the terminal's
 * width so that it never wraps. Undefined, so nothing is drawn, when the stream is not a terminal (a pipe, a file)
 * or in CI, whose logs would keep every redraw.
 */
export function progressWriter(
  stream: TerminalStream,
  env: Readonly<Record<string, string | undefined>>,
): ((line: string) => void) | undefined {
  if (stream.isTTY !== true || inCi(env)) return undefined;
  return (line) => {
    // A pseudo-terminal may report 0 columns: taken as the usual 80.
    const width = Math.max(10, (stream.columns || 80) - 1);
    const shown = line.length > width ? `${line.slice(0, width - 1)}…` : line;
    // Carriage return, then erase the line (what readline's cursorTo and clearLine write).
    stream.write(`\r\x1b[2K${shown}`);
  };
}

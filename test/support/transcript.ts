/**
 * The documentation's ```console sessions, read and compared: the commands a block shows (`$ ` lines, a trailing
 * `\` going on to the next line) with the output under each, and what changes from run to run written as
 * placeholders on both sides before comparing. Read by test/docs/snippets.test.ts (the getting-started curl
 * sessions) and test/docs/cli-readme.test.ts (the CLI README's sessions).
 */

/** One `$ ` command of a session and the lines shown under it, up to the next command. */
export interface TranscriptStep {
  /** The command as run: continuation lines joined, without the `$ `. */
  readonly command: string;
  /** The output shown, lines joined with `\n`, trailing blank lines left out. */
  readonly output: string;
}

/** The commands of a console session and their output; lines before the first command are not a step. */
export function transcriptSteps(transcript: string): TranscriptStep[] {
  const steps: { command: string; output: string[] }[] = [];
  const lines = transcript.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!line.startsWith('$ ')) {
      steps.at(-1)?.output.push(line);
      continue;
    }
    let command = line.slice(2);
    while (command.endsWith('\\') && i + 1 < lines.length)
      command = `${command.slice(0, -1).trimEnd()} ${lines[++i]?.trim()}`;
    steps.push({ command, output: [] });
  }
  return steps.map((step) => ({ command: step.command, output: step.output.join('\n').trimEnd() }));
}

/** A value that changes from run to run, and the placeholder that stands for it. */
export type Mask = readonly [pattern: RegExp, placeholder: string];

/** `text` with every mask applied, in order. */
export function masked(text: string, masks: readonly Mask[]): string {
  return masks.reduce((out, [pattern, placeholder]) => out.replace(pattern, placeholder), text);
}

/** An HTTP session's varying parts, as curl prints them: the seconds to wait, the date, the length, the ETag. */
export const HTTP_SESSION_MASKS: readonly Mask[] = [
  [/(\bt=|retry-after: |"retryAfter":)\d+/gi, '$1<seconds>'],
  [/^(date|etag|content-length): .*$/gim, '$1: <varies>'],
];

/**
 * Whether `printed` is what `shown` shows, a line of `shown` that is only `...` (indented or not) standing for
 * any number of lines, none included: a block may cut a long report, but says where.
 */
export function showsElided(printed: string, shown: string): boolean {
  const have = printed.split('\n');
  const want = shown.split('\n');
  const memo = new Map<string, boolean>();
  const from = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (j === want.length) result = i === have.length;
    else if (want[j]?.trim() === '...') result = from(i, j + 1) || (i < have.length && from(i + 1, j));
    else result = i < have.length && have[i] === want[j] && from(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return from(0, 0);
}

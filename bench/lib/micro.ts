/** Runs the micro-benchmarks as child processes and collects the result line each prints last. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Markdown lines of the micro-benchmarks, and their raw figures. */
export interface MicroResults {
  readonly lines: readonly string[];
  readonly figures: Record<string, unknown>;
}

/** Marks the one output line a micro-benchmark hands to the suite: `RESULT {json}`. */
export const RESULT_PREFIX = 'RESULT ';

async function runScript(
  file: string,
  nodeArgs: readonly string[] = [],
): Promise<{ text: string; figures: unknown }> {
  const script = fileURLToPath(new URL(`../${file}`, import.meta.url));
  const { stdout } = await execFileAsync(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    maxBuffer: 16 * 2 ** 20,
  });
  const lines = stdout.trimEnd().split('\n');
  const result = lines.find((line) => line.startsWith(RESULT_PREFIX));
  return {
    text: lines.filter((line) => !line.startsWith(RESULT_PREFIX)).join('\n'),
    figures: result ? JSON.parse(result.slice(RESULT_PREFIX.length)) : undefined,
  };
}

/** Rules compile and match, MemoryStore bytes per key, leases on a hot global rule. */
export async function runMicroBenchmarks(): Promise<MicroResults> {
  const lines: string[] = [];
  const figures: Record<string, unknown> = {};
  for (const [name, file, args] of [
    ['rules', 'rules-match.ts', []],
    ['memory', 'memory-store.ts', ['--expose-gc']],
    ['leases', 'leases.ts', []],
  ] as const) {
    console.log(`micro-benchmark: ${file}`);
    const { text, figures: raw } = await runScript(file, args);
    figures[name] = raw;
    lines.push(`### ${file}`, '', '```', text, '```', '');
  }
  return { lines, figures };
}

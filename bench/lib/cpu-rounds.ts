/**
 * Benches that compare variants in rounds of CPU time, each variant in its own worker process (bench/inprocess.ts,
 * bench/hot-keys.ts): the worker's measuring loop, and the parent's handle on a worker.
 */
import { fork } from 'node:child_process';

/** Slices each measurement is cut into; its figure is the median slice, so a GC pause or a neighbour's burst in one slice does not move it. */
export const SLICES = 7;

/** The middle of a non-empty list (the upper one of an even list's two). */
export const median = (list: readonly number[]): number => [...list].sort((a, b) => a - b)[list.length >> 1]!;

/**
 * Runs `step(i)` in batches of 1,000 for `ms` of CPU time, from `i = start`, in {@link SLICES} slices after a full
 * GC (when the process has `--expose-gc`); calls per CPU-second of the median slice, and the next `i`.
 */
export function perCpuSecond(
  ms: number,
  step: (i: number) => void,
  start: number,
): { rate: number; next: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const rates: number[] = [];
  let i = start;
  for (let slice = 0; slice < SLICES; slice++) {
    const began = process.cpuUsage();
    const from = i;
    let used = 0;
    while (used < (ms * 1000) / SLICES) {
      for (const end = i + 1000; i < end; i++) step(i);
      const spent = process.cpuUsage(began);
      used = spent.user + spent.system;
    }
    rates.push((i - from) / (used / 1e6));
  }
  return { rate: median(rates), next: i };
}

/** A worker process, as its parent drives it. */
export interface RoundWorker<R> {
  /** The first message the worker sent, once it was ready. */
  readonly ready: unknown;
  /** One round of `ms` of CPU time: the worker's figures for it. */
  round(ms: number): Promise<R>;
  stop(): void;
}

/**
 * Forks `script` (with `--expose-gc`) as a worker and waits for its first message; each round then sends it
 * `{ms}` and waits for its answer. A worker that exits fails the round waiting on it, named by `label`.
 */
export async function forkRoundWorker<R>(
  label: string,
  script: string,
  args: readonly string[],
): Promise<RoundWorker<R>> {
  const child = fork(script, args, {
    execArgv: [...process.execArgv, '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<unknown>((done, fail) => {
      const exited = (code: number | null) => fail(new Error(`${label}: worker exited with ${code}`));
      child.once('exit', exited);
      child.once('message', (message) => {
        child.off('exit', exited);
        done(message);
      });
    });
  const ready = await next();
  return {
    ready,
    async round(ms) {
      const answer = next();
      child.send({ ms });
      return (await answer) as R;
    },
    stop: () => child.kill(),
  };
}

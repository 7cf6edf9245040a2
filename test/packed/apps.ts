/**
 * Runs a user's server from the packed test's app and talks to it over real HTTP: each server listens on a free
 * loopback port and prints `listening <port>`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appEnv, track } from './workspace.js';

/** A server started from the app. */
export interface RunningApp {
  readonly url: string;
  /** Everything it wrote to stderr so far (start-up notices, errors). */
  stderr(): string;
  stop(): void;
}

const START_TIMEOUT_MS = 60_000;

/** Starts `node [nodeArgs] <file>` in `cwd` and resolves once it says which port it listens on. */
export function startApp(file: string, cwd: string, nodeArgs: readonly string[] = []): Promise<RunningApp> {
  const child = track(
    spawn(process.execPath, [...nodeArgs, file], { cwd, env: appEnv(), stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`${file} did not start in ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    function fail(message: string): void {
      clearTimeout(timer);
      stopChild(child);
      reject(new Error(`${message}\n${stdout}\n${stderr}`));
    }
    child.on('exit', (code) => fail(`${file} exited with ${code} before listening`));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const port = /listening (\d+)/.exec(stdout)?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ url: `http://127.0.0.1:${port}`, stderr: () => stderr, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): void {
  if (child.exitCode === null && child.pid !== undefined) child.kill('SIGTERM');
}

/** Requests in a row until the first that is not a 200. */
export interface UntilDenied {
  /** How many were answered 200 before it. */
  readonly allowed: number;
  /** The first other answer (a 429 when the limit held), or undefined if all `max` were 200. */
  readonly denied: Response | undefined;
}

/** GETs `url` one request at a time, up to `max` times, until an answer is not a 200. */
export async function untilDenied(url: string, max: number, init?: RequestInit): Promise<UntilDenied> {
  for (let allowed = 0; allowed < max; allowed++) {
    const response = await fetch(url, init);
    if (response.status !== 200) return { allowed, denied: response };
    await response.arrayBuffer();
  }
  return { allowed: max, denied: undefined };
}

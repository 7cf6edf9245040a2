/** Child processes of the bench, each pinned to one CPU with taskset, talking over IPC. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadResult, ServerSpec, ServerStats } from './spec.js';

/** The CPU the servers under test run on; load and redis-server get the other one. */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Runs bench/dist/<name>.js (see build.ts), or `script`, on one CPU, with extra node flags. */
export function spawnPinned(
  cpu: number,
  name: string,
  env: Record<string, string> = {},
  script = fileURLToPath(new URL(`../dist/${name}.js`, import.meta.url)),
  nodeFlags: readonly string[] = [],
): ChildProcess {
  const child = spawn('taskset', ['-c', String(cpu), process.execPath, ...nodeFlags, script], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** The next IPC message of `child` that `accept` takes (answers something other than undefined for). */
export function nextMessage<T>(child: ChildProcess, accept: (message: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child ${child.pid} exited with ${code}`));
    const onMessage = (message: unknown) => {
      const value = accept(message);
      if (value === undefined) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(value);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Stops a child by its pid and waits for it to go. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    // SIGINT: the server exits cleanly, so that node --cpu-prof writes its profile.
    child.kill('SIGINT');
  });
}

/** A server under test. */
export interface BenchServer {
  readonly spec: ServerSpec;
  readonly url: string;
  stats(): Promise<ServerStats>;
  /** Runs `during` under V8's profiler in the server, and writes the profile to `path` (a .cpuprofile). */
  profiled<T>(during: () => Promise<T>, path: string): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts a server child on the server CPU and resolves once it listens: bench/dist/server.js, or `script` (the
 * server of another build of the tree), with `nodeFlags` (`--cpu-prof`, say).
 */
export async function startServer(
  spec: ServerSpec,
  script?: string,
  nodeFlags?: readonly string[],
): Promise<BenchServer> {
  const child = spawnPinned(SERVER_CPU, 'server', { BENCH_SPEC: JSON.stringify(spec) }, script, nodeFlags);
  const port = await nextMessage(child, (m) =>
    (m as { type?: string }).type === 'ready' ? (m as { port: number }).port : undefined,
  );
  return {
    spec,
    url: `http://127.0.0.1:${port}/`,
    async stats() {
      const reply = nextMessage(child, (m) =>
        (m as { type?: string }).type === 'stats' ? (m as { stats: ServerStats }).stats : undefined,
      );
      child.send('stats');
      return reply;
    },
    async profiled(during, path) {
      const answer = (type: string) =>
        nextMessage(child, (m) => ((m as { type?: string }).type === type ? true : undefined));
      const started = answer('profiling');
      child.send('profile-start');
      await started;
      const result = await during();
      const written = answer('profiled');
      child.send({ profileTo: path });
      await written;
      return result;
    },
    stop: () => stop(child),
  };
}

/** The load generator child. */
export interface LoadGenerator {
  run(job: LoadJob): Promise<LoadResult>;
  stop(): Promise<void>;
}

/** Starts the autocannon child on the load CPU. */
export function startLoad(): LoadGenerator {
  const child = spawnPinned(LOAD_CPU, 'load');
  let nextId = 0;
  return {
    async run(job) {
      const id = nextId++;
      const reply = nextMessage(child, (m) => {
        const message = m as { id: number; result?: LoadResult; error?: string };
        return message.id === id ? message : undefined;
      });
      child.send({ id, job });
      const message = await reply;
      if (message.result === undefined) throw new Error(`load run failed: ${message.error}`);
      return message.result;
    },
    stop: () => stop(child),
  };
}

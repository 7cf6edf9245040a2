/**
 * Test harness: a private PostgreSQL server (initdb into a temp dir, postgres on a free loopback port with its
 * socket in that dir), started by the tests and stopped by pid. Never the machine's server on 5432. initdb and
 * postgres refuse to run as root: as root they run as the `postgres` OS user, in a temp dir it owns.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from './redis.js';

const HOST = '127.0.0.1';
const SHARED_PORT = 5432;
const START_TIMEOUT_MS = 30_000;
const USER = 'sluice';

const running = new Set<ChildProcess>();
// A crashed or interrupted run must not leave servers behind: immediate shutdown, resumed first if paused.
process.once('exit', () => {
  for (const child of running) {
    if (child.pid === undefined) continue;
    signalServer(child.pid, 'SIGCONT');
    signalServer(child.pid, 'SIGQUIT');
  }
});

/** A private PostgreSQL server. */
export interface PostgresServer {
  readonly host: string;
  readonly port: number;
  /** The postmaster's pid (the backends are its children). */
  readonly pid: number;
  /** A connection string for a fresh pool. */
  readonly url: string;
  /** SIGSTOP to the postmaster and every backend: the database hangs, connections stay open. */
  pause(): void;
  /** SIGCONT: the paused database goes on. */
  resume(): void;
  /** Immediate shutdown (SIGQUIT: backends killed, shared memory freed), awaited; the data dir stays. */
  kill(): Promise<void>;
  /** Starts the server again on its port and data dir (after {@link kill}, or killing it first). */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** The newest PostgreSQL's bin directory under /usr/lib/postgresql. */
function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'postgres')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined)
    throw new Error('no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)');
  return join(base, newest, 'bin');
}

/** The uid and gid to run the server as: the `postgres` user when we are root, else ourselves. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** The pids whose parent is `pid`, from /proc (each backend is its own process group: PostgreSQL's setsid). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {}
  }
  return children;
}

/** Sends `signal` to the postmaster and every process it started (backends, checkpointer, ...). */
function signalServer(pid: number, signal: NodeJS.Signals): void {
  for (const target of [pid, ...childrenOf(pid)]) {
    try {
      process.kill(target, signal);
    } catch {}
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Makes the data directory (initdb: trust auth on loopback, user `sluice`, no fsync). */
function initDb(bin: string, dir: string, owner: { uid: number; gid: number } | undefined): string {
  const data = join(dir, 'data');
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    stdio: 'ignore',
    ...(owner ?? {}),
  });
  return data;
}

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** Port to listen on; a free one by default (a closed port a store was pointed at before, say). */
  port?: number;
}

/** Starts a private PostgreSQL server and resolves once it answers a query. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = binDir();
  const owner = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = initDb(bin, dir, owner);
  const socketDir = join(dir, 'socket');
  mkdirSync(socketDir);
  if (owner !== undefined) chownSync(socketDir, owner.uid, owner.gid);
  const port = options.port ?? (await freePort());
  if (port === SHARED_PORT) throw new Error('refusing the machine PostgreSQL port 5432');
  const settings = [
    'listen_addresses=127.0.0.1',
    'fsync=off',
    'synchronous_commit=off',
    'max_connections=200',
  ];
  const url = `postgres://${USER}@${HOST}:${port}/postgres`;
  const launch = async (): Promise<{ pid: number; kill(): Promise<void> }> => {
    const child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', socketDir, ...settings.flatMap((s) => ['-c', s])],
      { stdio: 'ignore', ...(owner ?? {}) },
    );
    running.add(child);
    const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!(await canConnect(url))) {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`postgres on ${port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pid = child.pid!;
    const kill = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalServer(pid, 'SIGCONT');
      process.kill(pid, 'SIGQUIT');
      const forced = setTimeout(() => signalServer(pid, 'SIGKILL'), 10_000);
      await exit;
      clearTimeout(forced);
      running.delete(child);
    };
    return { pid, kill };
  };
  let current = await launch();
  return {
    host: HOST,
    port,
    get pid() {
      return current.pid;
    },
    url,
    pause: () => signalServer(current.pid, 'SIGSTOP'),
    resume: () => signalServer(current.pid, 'SIGCONT'),
    kill: () => current.kill(),
    restart: async () => {
      await current.kill();
      current = await launch();
    },
    stop: async () => {
      await current.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private server for a test file: started before its tests, stopped after. */
export interface PostgresSuite {
  readonly server: PostgresServer;
}

/** Registers the file's beforeAll/afterAll; read `server` inside tests, once it is up. */
export function postgresSuite(): PostgresSuite {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error('postgresSuite: the server is readable inside tests only');
      return server;
    },
  };
}

/** A fresh table prefix per test, so tests sharing a server never share counters. */
export function randomTablePrefix(label = 't'): string {
  return `${label}_${Math.random().toString(36).slice(2, 10)}_`;
}

/**
 * Test harness: private redis-server processes and a 3-master Redis Cluster on free loopback ports,
 * started as children and stopped by pid. Never touches the shared server on 6379.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Cluster, Redis } from 'ioredis';
import {
  createClient,
  createCluster,
  type RedisClientOptions,
  type RedisClientType,
  type RedisClusterType,
} from 'redis';
import { afterAll, beforeAll } from 'vitest';

const HOST = '127.0.0.1';
const SHARED_PORT = 6379;
const CLUSTER_BUS_OFFSET = 10_000;
const START_TIMEOUT_MS = 10_000;

const execFileAsync = promisify(execFile);
const running = new Set<ChildProcess>();

// A crashed or interrupted test run must not leave redis-servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A redis-server child process. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  /** Kills the process (SIGKILL: an abrupt outage) and waits for it to exit. */
  stop(): Promise<void>;
}

/** A Redis Cluster of masters, one child process each. */
export interface RedisClusterHandle {
  readonly nodes: { host: string; port: number }[];
  readonly servers: readonly RedisServer[];
  stop(): Promise<void>;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

/** A free loopback port (and, for cluster nodes, a free bus port at +10000), never 6379. */
export async function freePort(withBus = false): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 25_000);
    if (port === SHARED_PORT) continue;
    if (!(await canListen(port))) continue;
    if (withBus && !(await canListen(port + CLUSTER_BUS_OFFSET))) continue;
    return port;
  }
  throw new Error('no free port found');
}

/** Sends PING over a raw socket; resolves true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(port, HOST, () => socket.write('PING\r\n'));
  });
}

export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = START_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  running.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Options for {@link startRedis}. */
export interface StartRedisOptions {
  /** Port to listen on; a free one by default (restart on the same port by passing the old one). */
  port?: number;
  /** Extra redis-server arguments. */
  args?: readonly string[];
  /** Directory for files redis-server might write; a fresh temp dir by default. */
  dir?: string;
}

/** A redis-server started with `args`, once it answers PING on `port`; stopped by pid, SIGKILL. */
export async function spawnRedisServer(
  port: number,
  args: readonly string[],
  onStop: () => void = () => {},
): Promise<RedisServer> {
  if (port === SHARED_PORT) throw new Error('refusing to use the shared Redis port 6379');
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  running.add(child);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`redis-server on ${port} exited with ${code}`))),
  );
  exited.catch(() => {});
  await Promise.race([waitFor(`redis-server on ${port}`, () => ping(port)), exited]);
  const pid = child.pid;
  if (pid === undefined) throw new Error('redis-server has no pid');
  return {
    host: HOST,
    port,
    pid,
    stop: async () => {
      await stopChild(child);
      onStop();
    },
  };
}

/** Starts a private redis-server and resolves once it answers PING. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dir,
    '--enable-debug-command',
    'local',
    ...(options.args ?? []),
  ];
  return spawnRedisServer(port, args, () => {
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  });
}

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('redis-cli', ['-h', HOST, '-p', String(port), ...args]);
  return stdout;
}

/**
 * Starts `masters` cluster-enabled servers (on `ports` when given: addresses a client was pointed at before),
 * joins them with `redis-cli --cluster create`, waits for state ok.
 */
export async function startCluster(masters = 3, ports?: readonly number[]): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const port = ports?.[i] ?? (await freePort(true));
      servers.push(
        await startRedis({
          port,
          dir,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--cluster-node-timeout',
            '2000',
          ],
        }),
      );
    }
    await execFileAsync('redis-cli', [
      '--cluster',
      'create',
      ...servers.map((s) => `${HOST}:${s.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const server of servers) {
      await waitFor(`cluster state ok on ${server.port}`, async () =>
        (await redisCli(server.port, 'cluster', 'info')).includes('cluster_state:ok'),
      );
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    nodes: servers.map((s) => ({ host: s.host, port: s.port })),
    servers,
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A random key prefix so that tests sharing a server never see each other's keys. */
export function randomPrefix(label = 't'): string {
  return `${label}${Math.random().toString(36).slice(2, 10)}`;
}

/** Every key starting with `prefix`, by SCAN (never KEYS), on one server. */
export async function scanKeys(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

/** Resolves once an ioredis client is ready to take commands. */
export async function ready(client: Redis | Cluster): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    client.once('ready', () => resolve());
    client.once('end', () => reject(new Error('client ended before ready')));
  });
}

/** One private redis-server for a test file: a client for the code under test and one to inspect with. */
export interface RedisSuite {
  readonly server: RedisServer;
  readonly client: Redis;
  readonly admin: Redis;
}

/** Options of {@link redisSuite}: the server's, and the name the code's client gives its connection. */
export interface RedisSuiteOptions extends StartRedisOptions {
  /** CLIENT SETNAME of `client`, so that CLIENT LIST and MONITOR can tell its connection apart. */
  clientName?: string;
}

/** Registers the file's beforeAll/afterAll; read the fields inside tests, once the server is up. */
export function redisSuite(options: RedisSuiteOptions = {}): RedisSuite {
  let suite: RedisSuite | undefined;
  beforeAll(async () => {
    const { clientName, ...serverOptions } = options;
    const server = await startRedis(serverOptions);
    const client = new Redis({
      host: server.host,
      port: server.port,
      ...(clientName === undefined ? {} : { connectionName: clientName }),
    });
    const admin = new Redis({ host: server.host, port: server.port });
    await Promise.all([ready(client), ready(admin)]);
    suite = { server, client, admin };
  });
  afterAll(async () => {
    suite?.client.disconnect();
    suite?.admin.disconnect();
    await suite?.server.stop();
  });
  const get = () => {
    if (suite === undefined) throw new Error('redisSuite fields are readable inside tests only');
    return suite;
  };
  return {
    get server() {
      return get().server;
    },
    get client() {
      return get().client;
    },
    get admin() {
      return get().admin;
    },
  };
}

/** Script calls (EVALSHA and EVAL) the server counted so far, from INFO commandstats. */
export async function scriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
  return calls;
}

/** A connected node-redis client to a server; errors are the test's to observe, not to crash on. */
export async function nodeRedisClient(
  address: { host: string; port: number },
  options: Omit<RedisClientOptions, 'socket'> & { socket?: Record<string, unknown> } = {},
): Promise<RedisClientType> {
  const client = createClient({
    ...options,
    socket: { host: address.host, port: address.port, ...options.socket },
  }) as unknown as RedisClientType;
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** A connected node-redis Cluster client to a Cluster started by {@link startCluster}. */
export async function nodeRedisCluster(handle: RedisClusterHandle): Promise<RedisClusterType> {
  const cluster = createCluster({
    rootNodes: handle.nodes.map(({ host, port }) => ({ socket: { host, port } })),
  }) as unknown as RedisClusterType;
  cluster.on('error', () => {});
  await cluster.connect();
  return cluster;
}

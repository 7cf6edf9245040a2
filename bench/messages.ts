/**
 * Messages per second through a message rule (issue 26): a `ws` server limited by @sluice/websocket runs in a
 * child pinned to CPU 0 (taskset); this process (the `ws` clients) and a private redis-server (never the shared
 * 6379) on CPU 1. CONNECTIONS sockets each send MESSAGES small text frames, WINDOW at a time (the server acks
 * each window once its handler has seen it, so at most CONNECTIONS x WINDOW are in flight); a round ends when
 * the server has handed every message to its handler. Decisions that failed open are counted and shown. Scenarios: no limits (the `ws` baseline), one rule per connection
 * and one per IP on MemoryStore, one per connection on RedisStore; every message admitted (the limit is high),
 * so the figure is the cost of deciding. Also reported: server CPU per message.
 * Run: npx tsx bench/messages.ts [--rounds=3 --connections=8 --messages=20000 --window=100]
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MemoryStore, type RuleSpec, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { type WebSocketLimit, websocketLimit } from '@sluice/websocket';
import { Redis } from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';
import { LOAD_CPU, SERVER_CPU, spawnPinned } from './lib/children.js';
import { startBenchRedis } from './lib/redis.js';
import { rotate, showSpread, spread } from './lib/stats.js';

const execFileAsync = promisify(execFile);

/** What the server reports between rounds. */
interface State {
  readonly cpuMicros: number;
  readonly failedOpen: number;
}

const option = (name: string, fallback: number): number => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};

type Scenario = 'none' | 'memory, per connection' | 'memory, per IP' | 'redis, per connection';
const SCENARIOS: readonly Scenario[] = [
  'none',
  'memory, per connection',
  'memory, per IP',
  'redis, per connection',
];

const rule = (key: string): RuleSpec => ({
  name: `messages_per_${key}`,
  match: {},
  key: [key],
  limit: { requests: 1_000_000_000, per: '60s' },
});

/** The child: a ws server whose limits the parent swaps per scenario; answers `done:<n>` per socket. */
async function serve(): Promise<void> {
  const redisPort = Number(process.env.BENCH_REDIS_PORT);
  const client = new Redis({ host: '127.0.0.1', port: redisPort });
  const quota = { window: 0 };
  const failed = { open: 0 };
  let limits: WebSocketLimit | undefined;
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => {
    let handled = 0;
    const handler = () => {
      handled += 1;
      if (handled % quota.window === 0) ws.send('ack');
    };
    ws.on('message', limits === undefined ? handler : limits.onMessage(ws, handler));
  });
  const server = createServer();
  server.on('upgrade', (req, socket, head) => {
    if (limits !== undefined) limits.handleUpgrade(wss)(req, socket, head);
    else wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (m: { scenario?: Scenario; window?: number; state?: true }) => {
    if (m.state) return process.send!({ cpuMicros: cpuMicros(), failedOpen: failed.open });
    void limits?.close();
    quota.window = m.window!;
    limits = limitsFor(m.scenario!, client, failed);
    process.send!({ ready: true });
  });
  process.send!({ port: (server.address() as AddressInfo).port });
}

function limitsFor(scenario: Scenario, client: Redis, failed: { open: number }): WebSocketLimit | undefined {
  if (scenario === 'none') return undefined;
  const store: Store = scenario.startsWith('redis')
    ? // A generous time limit: on a loaded 2-core box a slow answer must be measured, not failed open.
      new RedisStore({ client, prefix: `msg${Date.now()}`, timeoutMs: 10_000 })
    : new MemoryStore();
  return websocketLimit({
    store,
    // The upgrade passes (no upgrade rule); messages are checked against one rule.
    rules: { domain: 'bench_messages', rules: [] },
    messages: { rules: [rule(scenario.endsWith('IP') ? 'ip' : 'connection')] },
    observer: {
      onDecision: (decision) => {
        if (decision.failedOpen) failed.open += 1;
      },
    },
  });
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** One socket's part of a round: `messages` frames, `window` at a time, each window acked by the server. */
async function send(ws: WebSocket, messages: number, window: number): Promise<void> {
  for (let sent = 0; sent < messages; sent += window) {
    const acked = new Promise((resolve) => ws.once('message', resolve));
    for (let i = 0; i < window; i++) ws.send('m');
    await acked;
  }
}

/** One round: CONNECTIONS sockets send MESSAGES frames each; resolves with messages per second. */
async function round(port: number, connections: number, messages: number, window: number): Promise<number> {
  const sockets = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
          ws.once('open', () => resolve(ws));
          ws.once('error', reject);
        }),
    ),
  );
  const started = process.hrtime.bigint();
  await Promise.all(sockets.map((ws) => send(ws, messages, window)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  for (const ws of sockets) ws.close();
  return (connections * messages) / seconds;
}

async function main(): Promise<void> {
  const rounds = option('rounds', 3);
  const connections = option('connections', 8);
  const messages = option('messages', 20_000);
  const window = option('window', 100);
  await execFileAsync('taskset', ['-pc', String(LOAD_CPU), String(process.pid)]);
  const redis = await startBenchRedis();
  // The server: this file again, on the server CPU (BENCH_SERVE).
  const child = spawnPinned(
    SERVER_CPU,
    'messages',
    { BENCH_REDIS_PORT: String(redis.server.port), BENCH_SERVE: '1' },
    fileURLToPath(import.meta.url),
    ['--import', 'tsx'],
  );
  const ask = <T>(message: object): Promise<T> =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(message);
    });
  try {
    const { port } = await new Promise<{ port: number }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { port: number }));
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    const rates = new Map<Scenario, number[]>(SCENARIOS.map((s) => [s, []]));
    const cpu = new Map<Scenario, number[]>(SCENARIOS.map((s) => [s, []]));
    let failedOpen = 0;
    for (const scenario of SCENARIOS) {
      await ask({ scenario, window });
      await round(port, connections, 2_000, window); // warm-up: JIT, script load
    }
    for (let r = 0; r < rounds; r++) {
      for (const scenario of rotate(SCENARIOS, r)) {
        await ask({ scenario, window });
        const before = await ask<State>({ state: true });
        rates.get(scenario)!.push(await round(port, connections, messages, window));
        const after = await ask<State>({ state: true });
        cpu.get(scenario)!.push((after.cpuMicros - before.cpuMicros) / (connections * messages));
        failedOpen += after.failedOpen - before.failedOpen;
      }
    }
    console.log(`| scenario | messages/s, server on one core | server CPU µs per message |`);
    console.log('|---|---|---|');
    for (const scenario of SCENARIOS) {
      const rate = spread(rates.get(scenario)!.map((x) => x / 1000));
      console.log(`| ${scenario} | ${showSpread(rate, 1)}k | ${showSpread(spread(cpu.get(scenario)!), 1)} |`);
    }
    console.log(`decisions failed open in the measured rounds: ${failedOpen}`);
  } finally {
    child.kill();
    await redis.stop();
  }
}

if (process.env.BENCH_SERVE === '1') await serve();
else await main();

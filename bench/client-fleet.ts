/**
 * A fleet of clients against a limited Sluice server (Fastify, MemoryStore, real HTTP on loopback): naive
 * clients (immediate retry; a fixed sleep after a 429) against @sluice/client, with and without pacing.
 * Each client has its own API key and a per-key fixed window, so every client's window resets at the
 * same instant: the moment a naive fleet comes back all at once.
 *
 *   npx tsx bench/client-fleet.ts [--clients=20] [--limit=5] [--window=5] [--duration=20] [--rounds=1]
 *
 * The server runs in a child process (this file with --serve), so that a busy fleet does not slow the
 * server's clock or its event loop; it logs the arrival time and status of every request it gets.
 * Reported per client kind: goodput (2xx per second), the server's requests per second, 429s per
 * successful request, and the requests the server got in the second after each window reset (the peak,
 * and the mean over the resets of the run). The ideal goodput is clients x limit / window.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createFetch } from '@sluice/client';
import { rateLimit } from '@sluice/fastify';
import Fastify from 'fastify';

const { values: args } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    clients: { type: 'string', default: '20' },
    limit: { type: 'string', default: '5' },
    window: { type: 'string', default: '5' },
    duration: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
  },
});

const CLIENTS = Number(args.clients);
const LIMIT = Number(args.limit);
const WINDOW_MS = Number(args.window) * 1000;
/** Whole windows, so that the ideal goodput holds for the run. */
const DURATION_MS =
  Math.max(1, Math.round(Number(args.duration) / Number(args.window))) * Number(args.window) * 1000;
const ROUNDS = Number(args.rounds);
/** What a naive client sleeps after a 429. */
const FIXED_SLEEP_MS = 1000;

/** What the server saw during one run. */
interface ServerLog {
  /** Arrival times (epoch ms) of every request, refused ones included. */
  readonly arrivals: number[];
  readonly statuses: Record<string, number>;
}

// ---- the server (child process) ----

async function serve(): Promise<void> {
  const log: ServerLog = { arrivals: [], statuses: {} };
  const app = Fastify({ logger: false });
  await app.register(rateLimit, {
    // The keys are the bench's own: the start-up notice about unchecked API keys is not for this run.
    logger: { warn: () => {} },
    rules: {
      domain: 'fleet',
      rules: [
        {
          name: 'per_key',
          match: { auth: 'api_key' },
          key: ['api_key'],
          limit: { requests: LIMIT, per: `${WINDOW_MS / 1000}s` },
          algorithm: 'fixed_window',
        },
      ],
    },
  });
  app.get('/work', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  app.server.keepAliveTimeout = 60_000;
  app.server.on('request', (_req, res) => {
    log.arrivals.push(Date.now());
    res.once('finish', () => {
      log.statuses[res.statusCode] = (log.statuses[res.statusCode] ?? 0) + 1;
    });
  });
  process.on('message', (message) => {
    if (message === 'log') process.send?.({ type: 'log', log });
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', port: (app.server.address() as AddressInfo).port });
}

// ---- the fleet (this process) ----

/** One client kind: how a worker gets one unit of work done, looping until `stop` aborts. */
interface Contender {
  readonly name: string;
  readonly note: string;
  /** Makes one worker's loop: called once per worker. */
  worker(url: string, key: string, stop: AbortSignal): () => Promise<number>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Sends once with `send`, reads the body, answers the status. */
async function once(send: typeof fetch, url: string, key: string, stop: AbortSignal): Promise<number> {
  const response = await send(url, { headers: { 'x-api-key': key }, signal: stop });
  await response.arrayBuffer();
  return response.status;
}

const CONTENDERS: readonly Contender[] = [
  {
    name: 'naive, immediate retry',
    note: 'loops on fetch; a 429 is sent again at once',
    worker: (url, key, stop) => () => once(fetch, url, key, stop),
  },
  {
    name: `naive, fixed ${FIXED_SLEEP_MS / 1000} s sleep`,
    note: 'sleeps a fixed second after a 429, then sends again',
    worker: (url, key, stop) => async () => {
      const status = await once(fetch, url, key, stop);
      if (status === 429) await sleep(FIXED_SLEEP_MS, stop);
      return status;
    },
  },
  {
    name: '@sluice/client, no pacing',
    note: 'createFetch({pacing: false}): Retry-After plus jitter, retry budget',
    worker: (url, key, stop) => {
      const client = createFetch({ pacing: false });
      return () => once(client, url, key, stop);
    },
  },
  {
    name: '@sluice/client',
    note: 'createFetch(): pacing from the RateLimit fields, Retry-After plus jitter, retry budget',
    worker: (url, key, stop) => {
      const client = createFetch();
      return () => once(client, url, key, stop);
    },
  },
];

/** One contender's figures for one run. */
interface Result {
  readonly name: string;
  readonly goodput: number;
  readonly serverRate: number;
  readonly refusedPerSuccess: number;
  readonly peakAfterReset: number;
  readonly meanAfterReset: number;
}

function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--serve'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    child.on('message', (message: { type: string; port?: number }) => {
      if (message.type === 'ready') resolve({ child, port: message.port! });
    });
  });
}

function serverLog(child: ChildProcess): Promise<ServerLog> {
  return new Promise((resolve) => {
    child.on('message', (message: { type: string; log?: ServerLog }) => {
      if (message.type === 'log') resolve(message.log!);
    });
    child.send('log');
  });
}

/** Runs `contender`'s fleet for DURATION_MS against a fresh server. */
async function run(contender: Contender): Promise<Result> {
  const { child, port } = await startServer();
  const url = `http://127.0.0.1:${port}/work`;
  // Starts on a window boundary and runs whole windows: the ideal goodput is then exact.
  await sleep(WINDOW_MS - (Date.now() % WINDOW_MS), new AbortController().signal);
  const stop = new AbortController();
  const started = Date.now();
  const timer = setTimeout(() => stop.abort(), DURATION_MS);
  const workers = Array.from({ length: CLIENTS }, async (_, i) => {
    const step = contender.worker(url, `key-${i}`, stop.signal);
    while (!stop.signal.aborted) {
      try {
        await step();
      } catch {
        // The abort at the end of the run, while a request or a wait was under way.
      }
    }
  });
  await Promise.all(workers);
  clearTimeout(timer);
  const ended = Date.now();
  const log = await serverLog(child);
  child.disconnect();
  return summarise(contender.name, log, started, ended);
}

function summarise(name: string, log: ServerLog, started: number, ended: number): Result {
  const seconds = (ended - started) / 1000;
  const ok = log.statuses['200'] ?? 0;
  const refused = log.statuses['429'] ?? 0;
  // Every window reset after the start (the start itself is every client's first request) that leaves a
  // full second after it.
  const afterReset: number[] = [];
  for (
    let reset = Math.floor(started / WINDOW_MS + 1) * WINDOW_MS;
    reset + 1000 <= ended;
    reset += WINDOW_MS
  ) {
    afterReset.push(log.arrivals.filter((at) => at >= reset && at < reset + 1000).length);
  }
  return {
    name,
    goodput: ok / seconds,
    serverRate: log.arrivals.length / seconds,
    refusedPerSuccess: ok === 0 ? Number.POSITIVE_INFINITY : refused / ok,
    peakAfterReset: Math.max(0, ...afterReset),
    meanAfterReset: afterReset.length === 0 ? 0 : afterReset.reduce((a, b) => a + b, 0) / afterReset.length,
  };
}

/** `median (min–max)` of one figure over the rounds, or the figure alone after one round. */
function spread(values: readonly number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median =
    sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const text = (value: number) => value.toFixed(digits);
  return sorted.length === 1 ? text(median) : `${text(median)} (${text(sorted[0]!)}–${text(sorted.at(-1)!)})`;
}

function table(results: readonly Result[]): string {
  const ideal = (CLIENTS * LIMIT) / (WINDOW_MS / 1000);
  const lines = [
    `${CLIENTS} clients, each with its own API key limited to ${LIMIT} requests per ${WINDOW_MS / 1000} s ` +
      `(fixed window: every key resets at the same instant); ${DURATION_MS / 1000} s per run, ${ROUNDS} round(s), ` +
      `median (min–max). Ideal goodput, and the requests of the second after a reset when spread evenly: ${ideal}/s.`,
    '',
    '| client | goodput (2xx/s) | server req/s | 429s per success | req in the 1 s after a reset: peak | mean |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const contender of CONTENDERS) {
    const runs = results.filter((result) => result.name === contender.name);
    const figure = (pick: (result: Result) => number, digits: number) => spread(runs.map(pick), digits);
    lines.push(
      `| ${contender.name} | ${figure((r) => r.goodput, 1)} | ${figure((r) => r.serverRate, 0)} | ` +
        `${figure((r) => r.refusedPerSuccess, 2)} | ${figure((r) => r.peakAfterReset, 0)} | ${figure((r) => r.meanAfterReset, 0)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const results: Result[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const contender of CONTENDERS) {
      const result = await run(contender);
      results.push(result);
      console.error(`round ${round}: ${contender.name} (${contender.note}): ${JSON.stringify(result)}`);
    }
  }
  console.log(table(results));
}

if (args.serve) await serve();
else await main();

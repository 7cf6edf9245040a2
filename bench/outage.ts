/**
 * What a store outage costs a request, per store and per outage shape, on private servers (never 6379 or 5432):
 * - `start-up`: the store is made on a closed port; the server starts there after OUTAGE_MS;
 * - `killed`: the server is killed mid-run (SIGKILL; PostgreSQL's immediate shutdown), started again after OUTAGE_MS;
 * - `hung`: the server is stopped with SIGSTOP mid-run, SIGCONT after OUTAGE_MS;
 * - `busy`: every reply is held 150 ms by a delaying TCP proxy in front of the server for OUTAGE_MS (a saturated
 *   store that still answers: nothing should fail open).
 * WORKERS loops send checks through the engine (createLimiter, one rule), one after another, 1 ms apart. For each
 * run: the latency of the checks made during the outage or waiting when it began (p50 / p99 / max), of those made
 * after its first second, the checks failed open (and whether any should not have been: `busy`), the time from the
 * fault's end to the first counted check, and the SLUICE_STORE_UNREACHABLE lines. Latency is a check's whole time in the engine; the
 * store's normal round trip (the `before` p50, ~0.1-1 ms) is what it adds over.
 * Stores: `redis` (ioredis) and `postgres` here; `node-redis`, `cluster` (an ioredis Cluster of 3 masters) and
 * `sentinel` (ioredis through one Sentinel; the primary is what breaks) are the failure-modes suite's sites
 * (test/failure-modes/sites.ts), without the busy shape.
 * Run: npx tsx bench/outage.ts [--stores=redis,postgres,node-redis,cluster,sentinel]
 *   [--shapes=start-up,killed,hung,busy] [--json=FILE]
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server, Socket } from 'node:net';
import { loadavg } from 'node:os';
import { compileRules, createLimiter, type Store } from '@sluice/core';
import { PostgresStore } from '@sluice/postgres';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { STORE_KINDS } from '../test/failure-modes/sites.js';
import { type PostgresServer, startPostgres } from '../test/support/postgres.js';
import { freePort, type RedisServer, startRedis } from '../test/support/redis.js';

const HOST = '127.0.0.1';
const WORKERS = 10;
const BEFORE_MS = 1000;
const OUTAGE_MS = 3000;
const AFTER_MS = 2000;
const BUSY_DELAY_MS = 150;

const RULES = compileRules({
  domain: 'outage_bench',
  rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 10_000_000, per: '60s' } }],
});

type Shape = 'start-up' | 'killed' | 'hung' | 'busy';
type StoreName = 'redis' | 'postgres' | 'node-redis' | 'cluster' | 'sentinel';

/** The failure-modes suite's store kinds the bench runs by these names. */
const KINDS: Partial<Record<StoreName, string>> = {
  'node-redis': 'node-redis',
  cluster: 'ioredis Cluster',
  sentinel: 'ioredis Sentinel',
};

/** A server behind a proxy that can hold every reply `delayMs` (0: passes bytes on at once). */
interface DelayProxy {
  readonly port: number;
  delayMs: number;
  close(): Promise<void>;
}

async function delayProxy(target: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const proxy: DelayProxy = { port: 0, delayMs: 0, close: async () => {} };
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    upstream.connect(target, HOST);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (proxy.delayMs === 0) client.write(chunk);
      else setTimeout(() => client.destroyed || client.write(chunk), proxy.delayMs);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return Object.assign(proxy, {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
}

/** One store kind on its server: made up or down, broken and mended by shape. */
interface Site {
  readonly store: Store;
  /** Breaks the server in the shape's way. */
  fault(): Promise<void>;
  /** Ends the fault (starts the server, SIGCONT, delay off). */
  mend(): Promise<void>;
  close(): Promise<void>;
}

async function redisSite(shape: Shape, logger: { warn(m: string): void }): Promise<Site> {
  const port = await freePort();
  let server: RedisServer | undefined = shape === 'start-up' ? undefined : await startRedis({ port });
  const proxy = shape === 'busy' ? await delayProxy(port) : undefined;
  const client = new Redis({ host: HOST, port: proxy?.port ?? port, ...recommendedRedisOptions });
  client.on('error', () => {});
  const store = new RedisStore({ client, prefix: `outage${Date.now()}`, logger });
  return {
    store,
    fault: async () => {
      if (shape === 'killed') {
        process.kill(server!.pid, 'SIGKILL');
        await server!.stop();
      }
      if (shape === 'hung') process.kill(server!.pid, 'SIGSTOP');
      if (proxy !== undefined) proxy.delayMs = BUSY_DELAY_MS;
    },
    mend: async () => {
      if (shape === 'start-up' || shape === 'killed') server = await startRedis({ port });
      if (shape === 'hung') process.kill(server!.pid, 'SIGCONT');
      if (proxy !== undefined) proxy.delayMs = 0;
    },
    close: async () => {
      await store.close();
      client.disconnect();
      await proxy?.close();
      await server?.stop();
    },
  };
}

async function postgresSite(shape: Shape, logger: { warn(m: string): void }): Promise<Site> {
  const port = await freePort();
  let server: PostgresServer | undefined = shape === 'start-up' ? undefined : await startPostgres({ port });
  const proxy = shape === 'busy' ? await delayProxy(port) : undefined;
  const store = new PostgresStore({
    connectionString: `postgres://sluice@${HOST}:${proxy?.port ?? port}/postgres`,
    createTable: true,
    sweepEveryMs: false,
    logger,
  });
  return {
    store,
    fault: async () => {
      if (shape === 'killed') await server!.kill();
      if (shape === 'hung') server!.pause();
      if (proxy !== undefined) proxy.delayMs = BUSY_DELAY_MS;
    },
    mend: async () => {
      if (shape === 'start-up') server = await startPostgres({ port });
      if (shape === 'killed') await server!.restart();
      if (shape === 'hung') server!.resume();
      if (proxy !== undefined) proxy.delayMs = 0;
    },
    close: async () => {
      await store.close();
      await proxy?.close();
      await server?.stop();
    },
  };
}

/** A store kind of test/failure-modes/sites.ts, broken in the shape's way (no busy shape). */
async function kindSite(
  storeName: StoreName,
  shape: Shape,
  logger: { warn(m: string): void },
): Promise<Site> {
  const kind = STORE_KINDS.find((k) => k.name === KINDS[storeName]);
  if (kind === undefined || shape === 'busy') throw new Error(`no ${shape} shape for ${storeName}`);
  const site = await kind.site(shape !== 'start-up', logger);
  return {
    store: site.store,
    fault: async () => {
      if (shape === 'killed') await site.kill();
      if (shape === 'hung') site.pause();
    },
    mend: async () => {
      if (shape === 'start-up' || shape === 'killed') await site.start();
      if (shape === 'hung') site.resume();
    },
    close: () => site.close(),
  };
}

interface Checked {
  /** ms since the run began. */
  readonly at: number;
  readonly ms: number;
  readonly failedOpen: boolean;
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function figures(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

async function measure(storeName: StoreName, shape: Shape) {
  const notices: string[] = [];
  const logger = { warn: (message: string) => void notices.push(message) };
  const make = storeName === 'redis' ? redisSite : storeName === 'postgres' ? postgresSite : undefined;
  const site = make === undefined ? await kindSite(storeName, shape, logger) : await make(shape, logger);
  const limiter = createLimiter({ rules: RULES, store: site.store, logger: { warn: () => {} } });
  if (shape !== 'start-up') await limiter.check({ api_key: 'warm' }); // script loaded, table made
  const checked: Checked[] = [];
  let running = true;
  const t0 = performance.now();
  const workers = Array.from({ length: WORKERS }, async (_, i) => {
    while (running) {
      const started = performance.now();
      const decision = await limiter.check({ api_key: `key${i}` });
      checked.push({ at: started - t0, ms: performance.now() - started, failedOpen: decision.failedOpen });
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const faultAt = shape === 'start-up' ? 0 : BEFORE_MS;
  await sleep(faultAt);
  await site.fault();
  await sleep(OUTAGE_MS);
  await site.mend();
  const mendedAt = performance.now() - t0;
  await sleep(AFTER_MS);
  running = false;
  await Promise.all(workers);
  await limiter.close();
  await site.close();

  const before = checked.filter((c) => c.at < faultAt).map((c) => c.ms);
  // The checks made during the outage, and those still waiting when it began (a hang holds them too).
  const during = checked.filter((c) => c.at + c.ms >= faultAt && c.at < faultAt + OUTAGE_MS);
  const later = during.filter((c) => c.at >= faultAt + 1000);
  const resumed = checked.find((c) => c.at >= mendedAt && !c.failedOpen);
  return {
    store: storeName,
    shape,
    before: figures(before),
    during: figures(during.map((c) => c.ms)),
    afterFirstSecond: figures(later.map((c) => c.ms)),
    failedOpen: during.filter((c) => c.failedOpen).length,
    failedOpenWrongly: shape === 'busy' ? checked.filter((c) => c.failedOpen).length : 0,
    resumedAfterMs: resumed === undefined ? null : Math.round(resumed.at - mendedAt),
    unreachableLines: notices.filter((n) => n.includes('SLUICE_STORE_UNREACHABLE')).length,
  };
}

function option(name: string, fallback: string): string {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? fallback : arg.slice(name.length + 3);
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(1) : String(Math.round(v)));

async function main(): Promise<void> {
  const stores = option('stores', 'redis,postgres').split(',') as StoreName[];
  const shapes = option('shapes', 'start-up,killed,hung,busy').split(',') as Shape[];
  const load = loadavg().map((l) => l.toFixed(2));
  console.log(`load average before the run: ${load.join(' ')}`);
  const rows = [];
  for (const store of stores) {
    for (const shape of shapes) {
      if (shape === 'busy' && KINDS[store] !== undefined) continue;
      const row = await measure(store, shape);
      rows.push(row);
      console.log(
        `${row.store} ${row.shape}: during p50/p99/max ${ms(row.during.p50)}/${ms(row.during.p99)}/${ms(row.during.max)} ms; ` +
          `after the first second ${ms(row.afterFirstSecond.p50)}/${ms(row.afterFirstSecond.p99)}/${ms(row.afterFirstSecond.max)} ms; ` +
          `failed open ${row.failedOpen}/${row.during.n} (wrongly ${row.failedOpenWrongly}); resumed ${row.resumedAfterMs} ms after; ` +
          `before p50 ${ms(row.before.p50)} ms; unreachable lines ${row.unreachableLines}`,
      );
    }
  }
  console.log(
    `\nload average after the run: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    '\n| store | outage | during: p50 / p99 / max ms | after its first second: p50 / p99 / max ms | failed open | resumed after |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    const wrongly = r.shape === 'busy' ? ` (${r.failedOpenWrongly} wrongly)` : '';
    console.log(
      `| ${r.store} | ${r.shape} | ${ms(r.during.p50)} / ${ms(r.during.p99)} / ${ms(r.during.max)} | ` +
        `${ms(r.afterFirstSecond.p50)} / ${ms(r.afterFirstSecond.p99)} / ${ms(r.afterFirstSecond.max)} | ` +
        `${r.failedOpen} of ${r.during.n}${wrongly} | ${r.resumedAfterMs ?? 'never'} ms |`,
    );
  }
  const json = option('json', '');
  if (json !== '') writeFileSync(json, JSON.stringify({ load, rows }, null, 2));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

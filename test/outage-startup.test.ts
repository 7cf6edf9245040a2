/**
 * A store unreachable from start-up (a deploy during an outage, a wrong port), on every store kind: ioredis,
 * node-redis, ioredis Cluster, ioredis Sentinel, PostgreSQL, each pointed at a closed port. After the first
 * wait, a request costs the store next to nothing: the breaker opens, as after an outage that began later;
 * every decision is marked failed open; the episode is logged once; and once a server listens on that port,
 * counting resumes. Requests go one after another through the engine, as a client's do. The bounds are
 * generous (a shared machine): the figures are bench/outage.ts's.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileRules, createLimiter, type Limiter, type Store } from '@sluice/core';
import { PostgresStore } from '@sluice/postgres';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { startPostgres } from './support/postgres.js';
import { freePort, randomPrefix, spawnRedisServer, startCluster, startRedis } from './support/redis.js';

const RULES = compileRules({
  domain: 'outage_startup',
  rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 100_000, per: '60s' } }],
});
const REQUEST = { api_key: 'k_outage' };

/** After the first second: the slowest check (target 25 ms) and the median (target 5 ms), with room. */
const LATER_MAX_MS = 150;
const LATER_MEDIAN_MS = 20;
/** The first wait: the patient limit (1 s), with room. */
const FIRST_WAIT_MS = 1800;
/** From the server's start to the first counted check: the client's reconnect delay and a probe. */
const RESUME_WITHIN_MS = 6000;

interface Site {
  readonly store: Store;
  /** Starts a server on the closed port the store was given. */
  start(): Promise<void>;
  close(): Promise<void>;
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Logger = { warn(message: string): void };
const HOST = '127.0.0.1';

const KINDS: Record<string, (logger: Logger) => Promise<Site>> = {
  ioredis: async (logger) => {
    const port = await freePort();
    const client = new Redis({ host: HOST, port, ...recommendedRedisOptions });
    client.on('error', () => {});
    return redisSite(client, logger, async () => void cleanups.push(stopper(await startRedis({ port }))));
  },
  'node-redis': async (logger) => {
    const port = await freePort();
    const client = createClient({ socket: { host: HOST, port, reconnectStrategy: () => 100 } });
    client.on('error', () => {});
    client.connect().catch(() => {});
    cleanups.push(() => client.destroy());
    return redisSite(
      client as unknown as ConstructorParameters<typeof RedisStore>[0]['client'],
      logger,
      async () => void cleanups.push(stopper(await startRedis({ port }))),
    );
  },
  'ioredis Cluster': async (logger) => {
    const ports = [await freePort(true), await freePort(true), await freePort(true)];
    const client = new Cluster(
      ports.map((port) => ({ host: HOST, port })),
      { ...recommendedRedisOptions, clusterRetryStrategy: () => 100 },
    );
    client.on('error', () => {});
    return redisSite(client, logger, async () => {
      const cluster = await startCluster(3, ports);
      cleanups.push(() => cluster.stop());
    });
  },
  'ioredis Sentinel': async (logger) => {
    const port = await freePort();
    const client = new Redis({
      sentinels: [{ host: HOST, port }],
      name: 'outage-primary',
      ...recommendedRedisOptions,
      sentinelRetryStrategy: () => 100,
    });
    client.on('error', () => {});
    return redisSite(client, logger, async () => {
      const primary = await startRedis();
      cleanups.push(stopper(primary));
      // A Sentinel on the closed port, naming the primary.
      const conf = join(tmpdir(), `sluice-outage-sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `sentinel monitor outage-primary ${HOST} ${primary.port} 1`,
          '',
        ].join('\n'),
      );
      cleanups.push(stopper(await spawnRedisServer(port, [conf, '--sentinel'])));
    });
  },
  PostgreSQL: async (logger) => {
    const port = await freePort();
    const store = new PostgresStore({
      connectionString: `postgres://sluice@${HOST}:${port}/postgres`,
      createTable: true,
      tablePrefix: `outage_${Date.now()}_`,
      logger,
    });
    cleanups.push(() => store.close());
    return {
      store,
      start: async () => {
        const server = await startPostgres({ port });
        cleanups.push(() => server.stop());
      },
      close: () => store.close(),
    };
  },
};

function stopper(server: { stop(): Promise<void> }): () => Promise<void> {
  return () => server.stop();
}

function redisSite(
  client: ConstructorParameters<typeof RedisStore>[0]['client'],
  logger: Logger,
  start: () => Promise<void>,
): Site {
  if ('disconnect' in client && typeof client.disconnect === 'function') {
    const disconnect = client.disconnect.bind(client) as () => void;
    cleanups.push(() => disconnect());
  }
  const store = new RedisStore({ client, prefix: randomPrefix(), logger });
  cleanups.push(() => store.close());
  return { store, start, close: () => store.close() };
}

interface Checked {
  readonly at: number;
  readonly ms: number;
  readonly failedOpen: boolean;
  readonly remaining: number;
}

/** Checks one after another (one every `gapMs`) until `until` says stop. */
async function checks(
  limiter: Limiter,
  t0: number,
  until: (last: Checked) => boolean,
  gapMs = 5,
): Promise<Checked[]> {
  const out: Checked[] = [];
  for (;;) {
    const started = performance.now();
    const decision = await limiter.check(REQUEST);
    const checked = {
      at: started - t0,
      ms: performance.now() - started,
      failedOpen: decision.failedOpen,
      remaining: decision.remaining,
    };
    out.push(checked);
    if (until(checked)) return out;
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe.each(Object.keys(KINDS))('%s unreachable at start-up', (kind) => {
  it('after the first wait: cheap checks, breaker open, all marked, logged once; counting resumes', async () => {
    const notices: string[] = [];
    const site = await KINDS[kind]!({ warn: (message) => void notices.push(message) });
    const limiter = createLimiter({ rules: RULES, store: site.store, logger: { warn: () => {} } });
    const t0 = performance.now();
    const breakerStates = new Set<string>();
    const down = await checks(limiter, t0, (last) => {
      breakerStates.add(site.store.health?.().breaker ?? 'none');
      return last.at > 2500;
    });
    const first = down[0]!;
    expect(first.ms).toBeLessThan(FIRST_WAIT_MS);
    expect(down.every((c) => c.failedOpen)).toBe(true);
    const later = down.filter((c) => c.at >= 1000).map((c) => c.ms);
    expect(later.length).toBeGreaterThan(20);
    expect(Math.max(...later)).toBeLessThan(LATER_MAX_MS);
    expect(median(later)).toBeLessThan(LATER_MEDIAN_MS);
    expect(breakerStates.has('open')).toBe(true);
    expect(notices.filter((n) => n.includes('SLUICE_STORE_UNREACHABLE'))).toHaveLength(1);

    await site.start();
    const back = performance.now();
    const resumed = await checks(limiter, back, (last) => !last.failedOpen || last.at > RESUME_WITHIN_MS, 20);
    const counted = resumed.at(-1)!;
    expect(counted.failedOpen).toBe(false);
    expect(counted.at).toBeLessThan(RESUME_WITHIN_MS);
    const next = await limiter.check(REQUEST);
    expect(next.failedOpen).toBe(false);
    expect(next.remaining).toBe(counted.remaining - 1);
    expect(notices.filter((n) => n.includes('SLUICE_STORE_UNREACHABLE'))).toHaveLength(1);
    expect(notices.filter((n) => n.includes('SLUICE_STORE_RECOVERED'))).toHaveLength(1);
    await limiter.close();
  }, 60_000);
});

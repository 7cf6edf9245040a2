/**
 * The stores the "Failure modes" promises are checked against, each on a private server it can break in the
 * ways an outage comes: unreachable from the start (a closed port, then a server there), killed mid-run (then
 * started again on the same port), hung (SIGSTOP, then SIGCONT). A new store joins the promises by adding a
 * kind here.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@sluice/core';
import { PostgresStore } from '@sluice/postgres';
import { jitteredRetryDelay, RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Cluster, Redis } from 'ioredis';
import { createClient } from 'redis';
import { startPostgres } from '../support/postgres.js';
import { freePort, randomPrefix, spawnRedisServer, startCluster, startRedis } from '../support/redis.js';

/** A store kind's server, which a test can break and mend. */
export interface Site {
  /** The store under test, on this site's server; closed by {@link Site.close}. */
  readonly store: Store;
  /** Kills the server (SIGKILL, or PostgreSQL's immediate shutdown). */
  kill(): Promise<void>;
  /** Starts the server again where it was: on a closed port, the first time. */
  start(): Promise<void>;
  /** SIGSTOP to the server's processes: connections stay open, nothing answers. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Closes the store and its client, stops the server. */
  close(): Promise<void>;
}

/** One kind of store: how to make a site with its server up, or down from the start. */
export interface StoreKind {
  readonly name: string;
  /**
   * A site whose server is `up` (or not listening yet: the store is made before it starts); the store's
   * notices go to `logger`.
   */
  site(up: boolean, logger: Logger): Promise<Site>;
}

/** Where a store's notices go. */
export interface Logger {
  warn(message: string): void;
}

/** Signals every process of a server. */
function signal(pids: readonly number[], name: NodeJS.Signals): void {
  for (const pid of pids) process.kill(pid, name);
}

/** One redis-server on `port`, started and killed on demand. */
function redisServer(port: number) {
  let server: Awaited<ReturnType<typeof startRedis>> | undefined;
  return {
    port,
    start: async () => {
      server = await startRedis({ port });
    },
    kill: async () => {
      await server?.stop();
      server = undefined;
    },
    pids: () => (server === undefined ? [] : [server.pid]),
  };
}

/** A store on one redis-server, through `connect(port)`'s client. */
function oneServer(
  name: string,
  connect: (port: number) => { client: RedisStoreClient; quit(): void },
): StoreKind {
  return {
    name,
    async site(up, logger) {
      const port = await freePort();
      const server = redisServer(port);
      if (up) await server.start();
      const { client, quit } = connect(port);
      const store = new RedisStore({ client, prefix: randomPrefix(), logger });
      return siteOf(store, server, async () => quit());
    },
  };
}

type RedisStoreClient = ConstructorParameters<typeof RedisStore>[0]['client'];

function siteOf(
  store: Store,
  server: { start(): Promise<void>; kill(): Promise<void>; pids(): number[] },
  closeClient: () => Promise<void>,
): Site {
  return {
    store,
    kill: () => server.kill(),
    start: () => server.start(),
    pause: () => signal(server.pids(), 'SIGSTOP'),
    resume: () => signal(server.pids(), 'SIGCONT'),
    close: async () => {
      signal(server.pids(), 'SIGCONT');
      try {
        await store.close();
        await closeClient();
      } finally {
        await server.kill();
      }
    },
  };
}

const ioredis = oneServer('ioredis', (port) => {
  const client = new Redis({ host: '127.0.0.1', port, ...recommendedRedisOptions });
  client.on('error', () => {});
  return { client, quit: () => client.disconnect() };
});

const nodeRedis = oneServer('node-redis', (port) => {
  // The reconnect delay the package README gives node-redis (its own default backs off to 2.2 s).
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: (retries) => jitteredRetryDelay(retries) },
  });
  client.on('error', () => {});
  client.connect().catch(() => {});
  return { client: client as unknown as RedisStoreClient, quit: () => client.destroy() };
});

/** A 3-master Cluster on ports chosen first, so that it can start after its client. */
const cluster: StoreKind = {
  name: 'ioredis Cluster',
  async site(up, logger) {
    const ports = [await freePort(true), await freePort(true), await freePort(true)];
    let handle: Awaited<ReturnType<typeof startCluster>> | undefined;
    const server = {
      start: async () => {
        handle = await startCluster(ports.length, ports);
      },
      kill: async () => {
        await handle?.stop();
        handle = undefined;
      },
      pids: () => handle?.servers.map((s) => s.pid) ?? [],
    };
    if (up) await server.start();
    const client = new Cluster(
      ports.map((port) => ({ host: '127.0.0.1', port })),
      { enableOfflineQueue: false, redisOptions: recommendedRedisOptions },
    );
    client.on('error', () => {});
    const store = new RedisStore({ client, prefix: randomPrefix(), logger });
    return siteOf(store, server, async () => client.disconnect());
  },
};

const postgres: StoreKind = {
  name: 'PostgreSQL',
  async site(up, logger) {
    const port = await freePort();
    let pg: Awaited<ReturnType<typeof startPostgres>> | undefined;
    let running = false;
    const server = {
      // The first start makes the database; later ones start it again on its data, table included.
      start: async () => {
        if (pg === undefined) pg = await startPostgres({ port });
        else await pg.restart();
        running = true;
      },
      kill: async () => {
        await pg?.kill();
        running = false;
      },
      pids: () => (pg === undefined || !running ? [] : [pg.pid]),
    };
    if (up) await server.start();
    const store = new PostgresStore({
      connectionString: `postgres://sluice@127.0.0.1:${port}/postgres`,
      createTable: true,
      logger,
    });
    const site = siteOf(store, server, async () => {});
    return {
      ...site,
      // The postmaster and its backends: a paused database answers on no connection.
      pause: () => pg?.pause(),
      resume: () => pg?.resume(),
      close: async () => {
        await site.close();
        await pg?.stop();
      },
    };
  },
};

/**
 * ioredis through one Sentinel, both on ports chosen first: the first start brings up the primary and a
 * Sentinel naming it; an outage is the primary's (killed and started again on its port, or paused).
 */
const sentinel: StoreKind = {
  name: 'ioredis Sentinel',
  async site(up, logger) {
    const sentinelPort = await freePort();
    const primary = redisServer(await freePort());
    let watching: Awaited<ReturnType<typeof spawnRedisServer>> | undefined;
    const server = {
      start: async () => {
        await primary.start();
        if (watching !== undefined) return;
        const conf = join(mkdtempSync(join(tmpdir(), 'sluice-fm-sentinel-')), 'sentinel.conf');
        const monitor = `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary.port} 1`;
        writeFileSync(conf, [`port ${sentinelPort}`, 'bind 127.0.0.1', monitor, ''].join('\n'));
        watching = await spawnRedisServer(sentinelPort, [conf, '--sentinel']);
      },
      kill: () => primary.kill(),
      pids: () => primary.pids(),
    };
    if (up) await server.start();
    const client = new Redis({
      sentinels: [{ host: '127.0.0.1', port: sentinelPort }],
      name: SENTINEL_NAME,
      ...recommendedRedisOptions,
    });
    client.on('error', () => {});
    const store = new RedisStore({ client, prefix: randomPrefix(), logger });
    const site = siteOf(store, server, async () => client.disconnect());
    return {
      ...site,
      close: async () => {
        await site.close();
        await watching?.stop();
      },
    };
  },
};

const SENTINEL_NAME = 'failure-modes-primary';

/** Every remote store the promises hold for. */
export const STORE_KINDS: readonly StoreKind[] = [ioredis, nodeRedis, cluster, sentinel, postgres];

/**
 * Real parts for the regions tests (issue 44): a redis-server per region and a global one, each region
 * reaching the global one through its own TCP proxy that adds the cross-region latency (and can drop the
 * link). Every server is a child process on a free loopback port, stopped by pid.
 */
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { type RedisServer, randomPrefix, ready, startRedis } from '../support/redis.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/** A region of the fleet: its name, its share of the traffic, and its one-way latency to the global store. */
export interface RegionPlan {
  readonly name: string;
  readonly share: number;
  readonly oneWayMs: number;
}

/** Three regions, traffic skewed 80/15/5, the global store 50, 100 and 150 ms away (round trip). */
export const REGIONS: readonly RegionPlan[] = [
  { name: 'us', share: 0.8, oneWayMs: 25 },
  { name: 'eu', share: 0.15, oneWayMs: 50 },
  { name: 'ap', share: 0.05, oneWayMs: 75 },
];

/** Time limit of a call to the global store: above the slowest round trip, as the guide asks. */
export const GLOBAL_TIMEOUT_MS = 1000;

/** What a store's notices and a limiter's go to: kept, so a test can count the lines of each code. */
export class Notices {
  readonly lines: string[] = [];
  readonly warn = (line: string): void => {
    this.lines.push(line);
  };

  count(code: string): number {
    return this.lines.filter((line) => line.includes(code)).length;
  }
}

/** One region's parts: its own redis-server and store, and its link to the global store. */
export interface RegionParts {
  readonly plan: RegionPlan;
  readonly server: RedisServer;
  readonly client: Redis;
  /** The region's own store: every request's one call goes here. */
  readonly store: RedisStore;
  readonly proxy: TcpProxy;
  readonly globalClient: Redis;
  /** The global store as this region reaches it: through its proxy. */
  readonly global: RedisStore;
  readonly notices: Notices;
}

/** A connected ioredis client with the recommended options; its errors are the store's to report. */
async function client(port: number): Promise<Redis> {
  const redis = new Redis({ host: '127.0.0.1', port, ...recommendedRedisOptions });
  redis.on('error', () => {});
  await ready(redis);
  return redis;
}

/** The regional servers, the global one, and a proxy per region in front of the global one. */
export class Fleet {
  readonly globalPrefix = randomPrefix('g');
  #global: RedisServer;
  readonly regions: readonly RegionParts[];
  /** A direct client of the global server, to read what the regions were granted. */
  admin: Redis;

  private constructor(global: RedisServer, admin: Redis, regions: RegionParts[]) {
    this.#global = global;
    this.admin = admin;
    this.regions = regions;
  }

  static async start(plans: readonly RegionPlan[] = REGIONS): Promise<Fleet> {
    const global = await startRedis();
    const admin = await client(global.port);
    const fleet = new Fleet(global, admin, []);
    try {
      for (const plan of plans) (fleet.regions as RegionParts[]).push(await fleet.#region(plan));
    } catch (error) {
      await fleet.stop();
      throw error;
    }
    return fleet;
  }

  get global(): RedisServer {
    return this.#global;
  }

  region(name: string): RegionParts {
    const parts = this.regions.find((r) => r.plan.name === name);
    if (parts === undefined) throw new Error(`no region ${name}`);
    return parts;
  }

  /** Kills the global redis-server (SIGKILL: its data is lost) and starts a new one on the same port. */
  async restartGlobal(downMs = 0): Promise<void> {
    const port = this.#global.port;
    this.admin.disconnect();
    await this.#global.stop();
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    this.#global = await startRedis({ port });
    this.admin = await client(port);
  }

  /** Stops every client, proxy and server it started (servers by pid). */
  async stop(): Promise<void> {
    for (const parts of this.regions) {
      parts.client.disconnect();
      parts.globalClient.disconnect();
      await parts.proxy.close();
      await parts.server.stop();
    }
    this.admin.disconnect();
    await this.#global.stop();
  }

  async #region(plan: RegionPlan): Promise<RegionParts> {
    const server = await startRedis();
    const proxy = await startTcpProxy(this.#global.port, { delayMs: plan.oneWayMs });
    const notices = new Notices();
    const regional = await client(server.port);
    const globalClient = await client(proxy.port);
    return {
      plan,
      server,
      client: regional,
      store: new RedisStore({ client: regional, prefix: randomPrefix('r'), logger: notices }),
      proxy,
      globalClient,
      global: new RedisStore({
        client: globalClient,
        prefix: this.globalPrefix,
        timeoutMs: GLOBAL_TIMEOUT_MS,
        maxTimeoutMs: GLOBAL_TIMEOUT_MS,
        logger: notices,
      }),
      notices,
    };
  }
}

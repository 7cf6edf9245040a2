/**
 * Test harness: a private Redis Sentinel set-up on free loopback ports, started as children and stopped by pid:
 * one primary, one replica, and Sentinel processes (`redis-server <conf> --sentinel`) watching them with a short
 * down-after, so a failover takes seconds. Never touches the shared server on 6379.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type RedisServer, redisCli, spawnRedisServer, startRedis, waitFor } from './redis.js';

/** The name the Sentinels monitor the primary under. */
export const PRIMARY_NAME = 'sluice-primary';
/** Sentinel's down-after-milliseconds: how long a silent primary takes to be judged down. */
export const DOWN_AFTER_MS = 1000;
const FAILOVER_TIMEOUT_MS = 4000;

/** A running Sentinel set-up. */
export interface SentinelSetup {
  /** The Sentinels' addresses, as clients take them. */
  readonly sentinels: { host: string; port: number }[];
  /** The data servers, primary first as started (a failover swaps their roles). */
  readonly servers: readonly RedisServer[];
  /** The address the Sentinels name as primary now. */
  primary(): Promise<{ host: string; port: number }>;
  /** SENTINEL FAILOVER on the first Sentinel: the replica is promoted, the primary demoted. */
  failover(): Promise<void>;
  /** Resolves once the Sentinels name a primary other than `old`. */
  promotedOtherThan(old: { port: number }): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

function sentinelConf(port: number, dir: string, primaryPort: number, quorum: number): string {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    'daemonize no',
    `dir ${dir}`,
    `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primaryPort} ${quorum}`,
    `sentinel down-after-milliseconds ${PRIMARY_NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${PRIMARY_NAME} ${FAILOVER_TIMEOUT_MS}`,
    `sentinel parallel-syncs ${PRIMARY_NAME} 1`,
    '',
  ].join('\n');
}

async function primaryOf(sentinelPort: number): Promise<{ host: string; port: number }> {
  const [host, port] = (await redisCli(sentinelPort, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', PRIMARY_NAME))
    .trim()
    .split('\n');
  return { host: host!, port: Number(port) };
}

/**
 * Starts a primary, a replica in sync with it, and `count` Sentinels (quorum: a majority) that know both.
 * Resolves once the replica is in sync and every Sentinel lists it.
 */
export async function startSentinelSetup(count = 1): Promise<SentinelSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sentinel-'));
  const servers: RedisServer[] = [];
  const sentinels: RedisServer[] = [];
  const stop = async () => {
    await Promise.all([...sentinels, ...servers].map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startRedis();
    servers.push(primary);
    servers.push(await startRedis({ args: ['--replicaof', primary.host, String(primary.port)] }));
    await waitFor('the replica in sync', async () =>
      (await redisCli(servers[1]!.port, 'INFO', 'replication')).includes('master_link_status:up'),
    );
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(conf, sentinelConf(port, dir, primary.port, Math.floor(count / 2) + 1));
      sentinels.push(await spawnRedisServer(port, [conf, '--sentinel']));
    }
    for (const sentinel of sentinels) {
      await waitFor('the Sentinel to list the replica', async () => {
        const replicas = await redisCli(sentinel.port, 'SENTINEL', 'REPLICAS', PRIMARY_NAME);
        return replicas.includes(String(servers[1]!.port)) && !replicas.includes('disconnected');
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const first = sentinels[0]!.port;
  return {
    sentinels: sentinels.map((s) => ({ host: s.host, port: s.port })),
    servers,
    primary: () => primaryOf(first),
    failover: async () => {
      const answer = await redisCli(first, 'SENTINEL', 'FAILOVER', PRIMARY_NAME);
      if (!answer.startsWith('OK')) throw new Error(`SENTINEL FAILOVER answered ${answer}`);
    },
    promotedOtherThan: async (old) => {
      let now = await primaryOf(first);
      await waitFor(
        'a new primary',
        async () => {
          now = await primaryOf(first);
          return now.port !== old.port;
        },
        20_000,
      );
      return now;
    },
    stop,
  };
}

/** The bench's private redis-server (never the shared 6379), pinned to the load CPU, and its counters. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type RedisServer, ready, startRedis } from '../../test/support/redis.js';
import { LOAD_CPU } from './children.js';

const execFileAsync = promisify(execFile);

/** A running redis-server with an admin connection. */
export interface BenchRedis {
  readonly server: RedisServer;
  readonly admin: Redis;
  /** Commands executed so far, all kinds but the admin's own INFO. */
  commands(): Promise<number>;
  /** CPU time redis-server has used (user + system), microseconds. */
  cpuMicros(): Promise<number>;
  version(): Promise<string>;
  stop(): Promise<void>;
}

/** Starts redis-server on a free port and pins it to the load CPU. */
export async function startBenchRedis(): Promise<BenchRedis> {
  const server = await startRedis();
  await execFileAsync('taskset', ['-pc', String(LOAD_CPU), String(server.pid)]);
  const admin = new Redis({ host: server.host, port: server.port });
  await ready(admin);
  return {
    server,
    admin,
    async commands() {
      const stats = await admin.info('commandstats');
      let total = 0;
      for (const match of stats.matchAll(/^cmdstat_([a-z_|]+):calls=(\d+)/gm)) {
        if (match[1] !== 'info') total += Number(match[2]);
      }
      return total;
    },
    async cpuMicros() {
      const info = await admin.info('cpu');
      const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
      return Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
    },
    async version() {
      return /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown';
    },
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

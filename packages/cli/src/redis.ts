import type { Io } from './io.js';

/** What the commands that reach Redis take from ioredis and @sluice/redis. */
export interface RedisModules {
  readonly Redis: typeof import('ioredis').Redis;
  readonly Cluster: typeof import('ioredis').Cluster;
  readonly redis: typeof import('@sluice/redis');
}

/**
 * ioredis and @sluice/redis, loaded only by the commands that reach Redis: they are optional peers of the
 * CLI. When one is missing, says so (`command` needs them) and how to install them.
 */
export async function loadRedisModules(command: string, io: Io): Promise<RedisModules | undefined> {
  try {
    const [ioredis, redis] = await Promise.all([import('ioredis'), import('@sluice/redis')]);
    return { Redis: ioredis.Redis, Cluster: ioredis.Cluster, redis };
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    io.err(
      `${command} needs ioredis and @sluice/redis; install them with: npm install ioredis @sluice/redis`,
    );
    return undefined;
  }
}

/** A client for a Redis URL (a Cluster node with `cluster`) that fails fast instead of retrying. */
export function connectRedis(modules: RedisModules, url: string, cluster: boolean) {
  const options = { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0 };
  const client = cluster
    ? new modules.Cluster([url], { lazyConnect: true, redisOptions: options })
    : new modules.Redis(url, { ...options, retryStrategy: () => null });
  client.on('error', () => {});
  return client;
}

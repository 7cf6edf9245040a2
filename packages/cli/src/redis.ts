import type { Io } from './io.js';

/** What the commands that reach Redis take from ioredis and @sluice/redis. */
export interface RedisModules {
  readonly Redis: typeof import('ioredis').Redis;
  readonly Cluster: typeof import('ioredis').Cluster;
  readonly redis: typeof import('@sluice/redis');
}

/**
 * ioredis and @sluice/redis, loaded only by the commands that reach Redis: they are optional peers of the
 * CLI. When one is missing, says which (`command` needs them) and how to install them; any other failure to load
 * is a bug, thrown whole.
 */
export async function loadRedisModules(command: string, io: Io): Promise<RedisModules | undefined> {
  const [ioredis, redis] = await Promise.allSettled([import('ioredis'), import('@sluice/redis')]);
  if (ioredis.status === 'fulfilled' && redis.status === 'fulfilled')
    return { Redis: ioredis.value.Redis, Cluster: ioredis.value.Cluster, redis: redis.value };
  const errors = [ioredis, redis].flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  const other = errors.find((error) => (error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND');
  if (other !== undefined) throw other;
  // Node names the package it could not find, also when @sluice/redis is there but its ioredis is not.
  const missing = ['ioredis', '@sluice/redis'].filter((name) =>
    errors.some((error) => String(error).includes(`'${name}'`)),
  );
  io.err(
    `${command} needs ioredis and @sluice/redis (not installed: ${missing.join(', ') || 'one of them'}); ` +
      'install them with: npm install ioredis @sluice/redis',
  );
  return undefined;
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

/** A Redis URL without its password, to print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
}

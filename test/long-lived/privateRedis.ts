import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { type RedisServer, ready, startRedis } from '../support/redis.js';

/** A redis-server of the test file's own (never the machine's) and a client, for the file's tests. */
export function privateRedis(): { readonly server: RedisServer; readonly client: Redis } {
  const handle = {} as { server: RedisServer; client: Redis };
  beforeAll(async () => {
    handle.server = await startRedis();
    handle.client = new Redis({ host: handle.server.host, port: handle.server.port });
    await ready(handle.client);
  });
  afterAll(async () => {
    handle.client.disconnect();
    await handle.server.stop();
  });
  return handle;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

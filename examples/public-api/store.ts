import type { Store } from '@sluice/core';

/**
 * The counter store: Redis when REDIS_URL is set (counters shared by every instance of the API), else
 * the limiter's default in-process MemoryStore. ioredis is only loaded when it is needed.
 */
export async function storeFromEnv(): Promise<{ store?: Store; close(): Promise<void> }> {
  const url = process.env.REDIS_URL;
  if (!url) return { close: async () => {} };
  const [{ Redis }, { RedisStore }] = await Promise.all([import('ioredis'), import('@sluice/redis')]);
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  return {
    store: new RedisStore({ client }),
    close: async () => {
      await client.quit();
    },
  };
}

/**
 * Start-up: a store built on a client that is not connected yet (`new Redis(url, recommendedRedisOptions)`, a
 * node-redis `connect()` not awaited, a server that starts a little later) decides the first requests in Redis:
 * they wait for the first connection within the store's time limit, and past it fail as a store error (the rule's
 * on_store_error decides), never reaching Redis late.
 */

import { StoreError } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, type RedisStoreOptions, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, type RedisServer, randomPrefix, startRedis } from './support/redis.js';

const check: Check = {
  rule: 'startup',
  tag: 'tagDDDDDDDDDDDDDDDDDDDD',
  algorithm: 'fixed_window',
  params: { limit: 10, windowMs: 60_000, burst: 10 },
  cost: 1,
  mode: 'enforce',
};

const servers: RedisServer[] = [];
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) close();
  await Promise.all(servers.map((s) => s.stop()));
});

type Library = 'ioredis' | 'node-redis';
type StoreClient = RedisStoreOptions['client'];

/** A client of `library` to `port`, connecting but not connected when this returns. */
function connecting(library: Library, port: number): StoreClient {
  if (library === 'ioredis') {
    const client = new Redis({ host: '127.0.0.1', port, ...recommendedRedisOptions });
    client.on('error', () => {});
    closers.push(() => client.disconnect());
    return client;
  }
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: () => 50 },
  });
  client.on('error', () => {});
  client.connect().catch(() => {});
  closers.push(() => client.destroy());
  return client as unknown as StoreClient;
}

async function admin(port: number): Promise<Redis> {
  const client = new Redis({ host: '127.0.0.1', port });
  closers.push(() => client.disconnect());
  return client;
}

describe.each<Library>(['ioredis', 'node-redis'])(
  '%s: checks made before the connection is up',
  (library) => {
    it('a check made at once is decided in Redis, not failed open', async () => {
      const server = await startRedis();
      servers.push(server);
      const prefix = randomPrefix();
      const client = connecting(library, server.port);
      const store = new RedisStore({ client, prefix, timeoutMs: 1000, breaker: false });
      expect(store.health().connected).toBe(false);
      const [first] = await store.evaluate([check], Date.now());
      expect(first).toMatchObject({ allowed: true, remaining: 9 });
      expect(first!.degraded).toBeUndefined();
      await store.close();
    });

    it('a server that starts a little later: the check waits for it', async () => {
      const port = await freePort();
      const prefix = randomPrefix();
      const client = connecting(library, port);
      const store = new RedisStore({ client, prefix, timeoutMs: 3000, breaker: false });
      const decided = store.evaluate([check], Date.now());
      await new Promise((resolve) => setTimeout(resolve, 300));
      servers.push(await startRedis({ port }));
      const [first] = await decided;
      expect(first).toMatchObject({ allowed: true, remaining: 9 });
      await store.close();
    });

    it('past the time limit the check fails as a store error, and never reaches Redis late', async () => {
      const port = await freePort();
      const prefix = randomPrefix();
      const client = connecting(library, port);
      const store = new RedisStore({ client, prefix, timeoutMs: 100, breaker: false });
      const started = Date.now();
      const error = await store.evaluate([check], Date.now()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe('ERR_SLUICE_STORE_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(1000);
      servers.push(await startRedis({ port }));
      const inspect = await admin(port);
      // Once connected, the next check is the first counted: the timed-out one was never sent.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [next] = await store.evaluate([check], Date.now());
      expect(next).toMatchObject({ allowed: true, remaining: 9 });
      expect(await inspect.dbsize()).toBe(1);
      await store.close();
    });
  },
);

/**
 * A renewal round that fails (the Redis server stopped) is reported to the observer as a store error, and the
 * heartbeat goes on; nothing is thrown into the app.
 */
import { createLimiter, type StoreErrorKind } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { randomPrefix, ready, startRedis } from '../support/redis.js';
import { sleep } from './privateRedis.js';
import { streamRules } from './rules.js';

it('reports failed renewal rounds as store errors while Redis is down, and keeps beating', async () => {
  const server = await startRedis();
  const client = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 0 });
  await ready(client);
  const errors: StoreErrorKind[] = [];
  const limiter = createLimiter({
    rules: streamRules(),
    store: new RedisStore({ client, prefix: randomPrefix('fault'), timeoutMs: 200, breaker: false }),
    observer: { onStoreError: (kind) => errors.push(kind) },
  });
  try {
    const decision = await limiter.check({ ip: '10.0.0.9' });
    expect(decision.allowed).toBe(true);
    limiter.hold(decision);
    await sleep(800);
    expect(errors).toEqual([]);
    await server.stop();
    // The heartbeat beats every ~667 ms (a third of 2 s): two rounds fail in 1.6 s.
    await sleep(1_600);
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(errors.every((kind) => kind === 'timeout' || kind === 'error')).toBe(true);
    await limiter.release(decision);
  } finally {
    client.disconnect();
    await limiter.close();
  }
}, 15_000);

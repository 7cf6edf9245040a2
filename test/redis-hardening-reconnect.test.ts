/**
 * RedisStore through real connection resets (a TCP proxy that sends RST): calls in flight when a connection
 * dies settle once and free their pending slot, whatever ioredis does with them, so limiting goes on.
 */

import { compileRules, createLimiter, parseRules, StoreError } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from './support/redis.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

let server: RedisServer;
let proxy: TcpProxy;

beforeAll(async () => {
  server = await startRedis();
  proxy = await startTcpProxy(server.port);
});
afterAll(async () => {
  await proxy.close();
  await server.stop();
});

const quiet = { warn: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client with the recommended options connected through the proxy, and a quiet store on it. */
async function throughProxy(options: { timeoutMs: number; maxPending?: number }) {
  const redis = new Redis({ host: proxy.host, port: proxy.port, ...recommendedRedisOptions });
  redis.on('error', () => {});
  await ready(redis);
  const store = new RedisStore({
    client: redis,
    prefix: randomPrefix(),
    breaker: false,
    logger: quiet,
    ...options,
  });
  return { redis, store };
}

function check(user: string, limit = 1_000_000): Check {
  return {
    rule: 'reset_rule',
    tag: `resetTag${user.padEnd(14, 'A')}`,
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

const RULES = compileRules(
  parseRules(`
domain: resets
rules:
  - name: five_per_minute
    match: {}
    key: [user]
    limit: {requests: 5, per: 60s}
    algorithm: fixed_window
`),
);

/** Waits until every promise settled, whichever way. */
const settled = (calls: Promise<unknown>[]) => Promise.allSettled(calls);

describe('calls in flight when the connection resets', () => {
  it('settle exactly once and free their pending slot; after 25 resets under load, limiting still works', async () => {
    const { redis, store } = await throughProxy({ timeoutMs: 50, maxPending: 60 });
    let outcomes = 0;
    const track = (call: Promise<unknown>) => {
      // Each call settles once: a second settle of the same promise is impossible, so count callbacks.
      call.then(
        () => outcomes++,
        () => outcomes++,
      );
      return call;
    };
    let calls = 0;
    // Background load: one evaluate per turn, all through the resets.
    let loading = true;
    const load = (async () => {
      while (loading) {
        calls++;
        await track(store.evaluate([check('load')], Date.now())).catch(() => {});
        await sleep(1);
      }
    })();

    for (let round = 0; round < 25; round++) {
      await ready(redis);
      // Commands sent into a black hole stay in flight (no answer, no error) until the reset.
      proxy.blackhole(true);
      const inFlight = Array.from({ length: 20 }, () => {
        calls++;
        return track(store.evaluate([check(`u${round}`)], Date.now()));
      });
      const answers = await settled(inFlight);
      expect(answers.every((a) => a.status === 'rejected' && a.reason instanceof StoreError)).toBe(true);
      proxy.resetAll();
      proxy.blackhole(false);
    }
    loading = false;
    await load;
    await ready(redis);

    // Every slot comes back although ioredis never answers the commands lost with the connections.
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 10_000, interval: 20 });
    expect(outcomes).toBe(calls);

    // And limiting works: five allowed from Redis, the sixth denied by the counter.
    const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000 });
    await vi.waitFor(async () => expect((await limiter.check({ user: 'warmup' })).failedOpen).toBe(false), {
      timeout: 5000,
      interval: 50,
    });
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.check({ user: 'after-resets' }));
    expect(decisions.map((d) => [d.allowed, d.failedOpen])).toEqual([
      [true, false],
      [true, false],
      [true, false],
      [true, false],
      [true, false],
      [false, false],
    ]);
    await limiter.close();
    redis.disconnect();
  });

  it('a call lost with its connection fails at once with a store error instead of waiting for its time limit', async () => {
    const { redis, store } = await throughProxy({ timeoutMs: 60_000 });
    proxy.blackhole(true);
    const call = store.evaluate([check('lost')], Date.now());
    await vi.waitFor(() => expect(store.pending).toBe(1));
    proxy.resetAll();
    proxy.blackhole(false);
    await expect(call).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE' });
    expect(store.pending).toBe(0);
    redis.disconnect();
  });
});

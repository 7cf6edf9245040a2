/**
 * Core's resilientStore around a remote store that has no resilience of its own (a RedisStore with a
 * 60 s time limit and no breaker), against a real Redis blocked by DEBUG SLEEP: the wrapper's own time
 * limit, breaker, fallback and bound on pending calls, each call settling once; and withResilience
 * leaving alone the stores that need nothing.
 */

import { MemoryStore, StoreError } from '@sluice/core';
import { type Check, resilientStore, type Store, withResilience } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { randomPrefix, redisSuite, scriptCalls } from './support/redis.js';

const redis = redisSuite();

/** The remote store to wrap: every call waits for Redis as long as it takes. */
function bareStore(): RedisStore {
  return new RedisStore({
    client: redis.client,
    prefix: randomPrefix(),
    timeoutMs: 60_000,
    breaker: false,
    logger: { warn: () => {} },
  });
}

function check(limit = 10): Check {
  return {
    rule: 'wrapped',
    tag: 'wrappedTagAAAAAAAAAAAA',
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

/** Blocks the server for `seconds`; resolves when it answers again. */
const sleepRedis = (seconds: number) => redis.admin.debug('SLEEP', seconds);

/** Until the server has started sleeping (its PING then waits): a short real wait, no race on the answer. */
const asleep = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('resilientStore around a remote store (real Redis, DEBUG SLEEP)', () => {
  // The first call of a store may send the whole script: over 50 ms on a loaded machine. Loaded once here,
  // each test's first call (with its 50 ms limit) finds it on the server.
  beforeAll(() => bareStore().evaluate([check()], 0));

  it('times a call out on its own clock, keeps it pending until Redis answers, then frees it once', async () => {
    const store = resilientStore(bareStore(), { name: 'Redis', timeoutMs: 50, breaker: false });
    await store.evaluate([check()], Date.now()); // the script is loaded
    const sleeping = sleepRedis(0.6);
    await asleep();
    await expect(store.evaluate([check()], Date.now())).rejects.toMatchObject({
      code: 'ERR_SLUICE_STORE_TIMEOUT',
    });
    expect(store.pending).toBe(1); // Redis may yet run it
    await sleeping;
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 10 });
    await store.close();
  });

  it('opens the breaker after repeated failures: calls are refused without reaching Redis', async () => {
    const store = resilientStore(bareStore(), {
      timeoutMs: 50,
      breaker: { failures: 2, cooldownMs: 60_000 },
      logger: { warn: () => {} },
    });
    await store.evaluate([check()], 0);
    const sleeping = sleepRedis(0.6);
    await asleep();
    await expect(store.evaluate([check()], 1)).rejects.toBeInstanceOf(StoreError);
    await expect(store.evaluate([check()], 2)).rejects.toBeInstanceOf(StoreError);
    await sleeping;
    // The two timed-out calls still run once Redis wakes: count from after they have been answered.
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 10 });
    const before = await scriptCalls(redis.admin);
    await expect(store.evaluate([check()], 3)).rejects.toMatchObject({ code: 'ERR_SLUICE_BREAKER_OPEN' });
    expect(await scriptCalls(redis.admin)).toBe(before);
    expect(store.health()).toMatchObject({ breaker: 'open', connected: false, failingOpenSince: 1 });
    await store.close();
  });

  it('answers from the in-process fallback meanwhile, each limit divided by the gateways, marked degraded', async () => {
    const store = resilientStore(bareStore(), { timeoutMs: 50, breaker: false, fallback: { gateways: 2 } });
    await store.evaluate([check()], 0);
    const sleeping = sleepRedis(0.6);
    await asleep();
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map(() => store.evaluate([check(10)], 1)));
    expect(results.map(([r]) => [r!.allowed, r!.limit, r!.degraded])).toEqual([
      ...Array.from({ length: 5 }, () => [true, 5, 'timeout']),
      [false, 5, 'timeout'],
    ]);
    await sleeping;
    await store.close();
  });

  it('bounds the calls waiting for the store: beyond maxPending they fail at once', async () => {
    const store = resilientStore(bareStore(), { timeoutMs: 50, maxPending: 2, breaker: false });
    await store.evaluate([check()], 0);
    const sleeping = sleepRedis(0.6);
    await asleep();
    const waiting = [store.evaluate([check()], 1), store.evaluate([check()], 1)];
    await expect(store.evaluate([check()], 1)).rejects.toThrow(/2 remote requests already pending/);
    await Promise.allSettled(waiting);
    await sleeping;
    await vi.waitFor(() => expect(store.pending).toBe(0), { timeout: 5000, interval: 10 });
    await store.close();
  });
});

describe('withResilience', () => {
  it('leaves an in-process store and a store that bounds its own calls alone, wraps any other', async () => {
    const memory = new MemoryStore();
    const redisStore = bareStore();
    const remote: Store = {
      evaluate: (checks, now) => memory.evaluate(checks, now),
      release: async () => {},
      close: async () => {},
    };
    expect(withResilience(memory)).toBe(memory);
    expect(withResilience(redisStore)).toBe(redisStore);
    const wrapped = withResilience(remote, { timeoutMs: 1000 });
    expect(wrapped).not.toBe(remote);
    expect(wrapped.timeLimited).toBe(true);
    expect((await wrapped.evaluate([check()], 0))[0]!.allowed).toBe(true);
    await Promise.all([wrapped.close(), redisStore.close()]);
  });
});

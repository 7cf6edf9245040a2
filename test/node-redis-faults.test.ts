/**
 * RedisStore on node-redis through real faults: a flushed script cache (EVAL on NOSCRIPT), connection
 * resets with calls in flight (a TCP proxy), a stopped and restarted server (fail fast while down, one
 * notice each way, health()), a lease key of the wrong type (TYPE and DEL through the transport), an
 * evicting maxmemory-policy (CONFIG GET through the transport); and one script call per turn.
 */

import { compileRules, createLimiter, parseRules, StoreError } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { KeyStateError, RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import type { RedisClientType } from 'redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { nodeRedisClient, randomPrefix, ready, scanKeys, scriptCalls, startRedis } from './support/redis.js';
import { startTcpProxy } from './support/tcp-proxy.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A private server for one test, a node-redis client to `port` (the server's by default), an admin. */
async function setUp(args: readonly string[] = []) {
  const server = await startRedis({ args });
  cleanups.push(() => server.stop());
  const admin = new Redis({ host: server.host, port: server.port });
  admin.on('error', () => {}); // the outage test stops the server under it
  cleanups.push(() => admin.disconnect());
  await ready(admin);
  return { server, admin };
}

async function connect(address: { host: string; port: number }): Promise<RedisClientType> {
  const client = await nodeRedisClient(address, { socket: { reconnectStrategy: () => 20 } });
  cleanups.push(() => client.destroy());
  return client;
}

function recorder() {
  const lines: string[] = [];
  return { lines, logger: { warn: (line: string) => lines.push(line) } };
}

const codes = (lines: readonly string[]) => lines.map((line) => /\[(\w+)\]$/.exec(line)?.[1]);

function check(user: string, overrides: Partial<Check> = {}): Check {
  return {
    rule: 'nr_rule',
    tag: `nrTag${user.padEnd(17, 'A')}`,
    algorithm: 'fixed_window',
    params: { limit: 1_000_000, windowMs: 60_000, burst: 1_000_000 },
    cost: 1,
    mode: 'enforce',
    ...overrides,
  };
}

const RULES = compileRules(
  parseRules(`
domain: node_redis
rules:
  - name: per_user
    match: {}
    key: [user]
    limit: {requests: 5, per: 60s}
  - name: per_user_day
    match: {}
    key: [user]
    limit: {requests: 1000, per: 1d}
    algorithm: quota
  - name: per_user_smooth
    match: {}
    key: [user]
    limit: {requests: 100, per: 1s}
    algorithm: token_bucket
`),
);

describe('scripts', () => {
  it('recovers from SCRIPT FLUSH mid-run without a failed decision (EVAL on NOSCRIPT)', async () => {
    const { server, admin } = await setUp();
    const client = await connect(server);
    const errors: string[] = [];
    const limiter = createLimiter({
      rules: RULES,
      store: new RedisStore({ client, prefix: randomPrefix(), timeoutMs: 5000 }), // generous: a loaded CI machine
      observer: { onStoreError: (kind, error) => errors.push(`${kind} ${error.message}`) },
    });
    const decisions = [];
    for (let round = 0; round < 10; round++) {
      await admin.script('FLUSH');
      decisions.push(
        ...(await Promise.all(
          Array.from({ length: 5 }, (_, i) => limiter.check({ user: `u${round}-${i}` })),
        )),
      );
    }
    expect(errors).toEqual([]);
    expect(decisions.filter((d) => d.failedOpen)).toEqual([]);
    expect(decisions.every((d) => d.allowed && d.results.length === 3)).toBe(true);
    await limiter.close();
  });

  it('32 concurrent requests of 3 rules each: one script call in all', async () => {
    const { server, admin } = await setUp();
    const client = await connect(server);
    const limiter = createLimiter({
      rules: RULES,
      store: new RedisStore({ client, prefix: randomPrefix(), timeoutMs: 5000 }), // generous: a loaded CI machine
    });
    await limiter.check({ user: 'warm' }); // loads the script
    const before = await scriptCalls(admin);
    const decisions = await Promise.all(
      Array.from({ length: 32 }, (_, i) => limiter.check({ user: `c${i}` })),
    );
    expect(decisions.every((d) => d.allowed && !d.failedOpen && d.results.length === 3)).toBe(true);
    expect((await scriptCalls(admin)) - before).toBe(1);
    await limiter.close();
  });
});

describe('connection faults', () => {
  it('calls in flight when the connection resets settle once with a store error and free their slot', async () => {
    const { server } = await setUp();
    const proxy = await startTcpProxy(server.port);
    cleanups.push(() => proxy.close());
    const client = await connect(proxy);
    const store = new RedisStore({
      client,
      prefix: randomPrefix(),
      timeoutMs: 60_000,
      breaker: false,
      logger: { warn: () => {} },
    });
    for (let round = 0; round < 5; round++) {
      await vi.waitFor(() => expect(client.isReady).toBe(true), { timeout: 10_000, interval: 20 });
      proxy.blackhole(true);
      const calls = Array.from({ length: 10 }, (_, i) =>
        store.evaluate([check(`r${round}-${i}`)], Date.now()),
      );
      expect(store.pending).toBe(10);
      // The calls leave at the end of the turn (coalescing) and node-redis writes them one turn later:
      // after a few turns they are on the wire, unanswered, when the connection resets.
      for (let turn = 0; turn < 4; turn++) await new Promise((resolve) => setImmediate(resolve));
      proxy.resetAll();
      proxy.blackhole(false);
      const answers = await Promise.allSettled(calls);
      expect(answers.every((a) => a.status === 'rejected' && a.reason instanceof StoreError)).toBe(true);
      expect(store.pending).toBe(0);
    }
    await vi.waitFor(() => expect(client.isReady).toBe(true), { timeout: 10_000, interval: 20 });
    const [after] = await store.evaluate(
      [check('after', { params: { limit: 1, windowMs: 60_000, burst: 1 } })],
      0,
    );
    expect(after!.allowed).toBe(true);
    await store.close();
  });

  it('a stopped server: fails fast once the loss is known, one notice each way, health() follows', async () => {
    const first = await setUp();
    const client = await connect(first.server);
    const { lines, logger } = recorder();
    const store = new RedisStore({
      client,
      prefix: randomPrefix(),
      timeoutMs: 60_000,
      breaker: { failures: 3, cooldownMs: 100 },
      logger,
    });
    await store.evaluate([check('a')], 1000);
    expect(store.health()).toEqual({ connected: true, breaker: 'closed', pending: 0 });

    await first.server.stop();
    await vi.waitFor(() => expect(client.isReady).toBe(false));
    // With a 60 s time limit, only knowing the connection is down can fail these at once.
    for (let now = 2000; now < 2005; now++) {
      await expect(store.evaluate([check('a')], now)).rejects.toBeInstanceOf(StoreError);
    }
    expect(store.health()).toMatchObject({
      connected: false,
      breaker: 'open',
      pending: 0,
      failingOpenSince: 2000,
    });
    expect(codes(lines)).toEqual(['SLUICE_STORE_UNREACHABLE']);

    const restarted = await startRedis({ port: first.server.port });
    cleanups.push(() => restarted.stop());
    await vi.waitFor(() => expect(client.isReady).toBe(true), { timeout: 10_000, interval: 20 });
    // The restarted server has no script loaded: EVAL on NOSCRIPT.
    const [back] = await store.evaluate([check('a')], 3000);
    expect(back!.allowed).toBe(true);
    expect(store.health()).toEqual({ connected: true, breaker: 'closed', pending: 0 });
    expect(codes(lines)).toEqual(['SLUICE_STORE_UNREACHABLE', 'SLUICE_STORE_RECOVERED']);
    await store.close();
  });
});

describe('keys and configuration', () => {
  it('a release meeting a lease key of the wrong type fails alone and removes the key', async () => {
    const { server, admin } = await setUp();
    const client = await connect(server);
    const prefix = randomPrefix();
    const store = new RedisStore({
      client,
      prefix,
      breaker: false,
      timeoutMs: 5000,
      logger: { warn: () => {} },
    });
    const lease = check('lease', {
      rule: 'conc',
      algorithm: 'concurrency',
      params: { limit: 2, windowMs: 30_000, burst: 2 },
      leaseId: 'l1',
      cost: 2, // a lease of cost 1 keeps no cost entry: the hash exists for other costs only
    });
    await store.evaluate([lease], Date.now());
    const keys = await scanKeys(admin, prefix);
    const costs = keys.find((key) => key.endsWith(':cc:w'))!;
    expect(keys).toHaveLength(2);
    await admin.del(costs);
    await admin.lpush(costs, 'not-a-hash');
    const release = store.release(
      [{ rule: 'conc', tag: lease.tag, algorithm: 'concurrency', id: 'l1', scope: 'store' }],
      Date.now(),
    );
    await expect(release).rejects.toBeInstanceOf(KeyStateError);
    await expect(release).rejects.toMatchObject({ rules: ['conc'] });
    expect(await admin.exists(costs)).toBe(0);
    expect(store.health().breaker).toBe('closed');
    await store.close();
  });

  it('warns once when Redis may evict limiter keys (allkeys-lru)', async () => {
    const { server } = await setUp(['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru']);
    const client = await connect(server);
    const { lines, logger } = recorder();
    const store = new RedisStore({ client, prefix: randomPrefix(), logger });
    await vi.waitFor(() => expect(codes(lines)).toEqual(['SLUICE_REDIS_EVICTION']));
    expect(lines[0]).toContain('allkeys-lru');
    await store.close();
  });
});

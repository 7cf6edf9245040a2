/**
 * A failover that demotes the connected primary: two real redis-servers behind a TCP proxy standing for the
 * virtual IP (or DNS name) that moves to the new primary. With recommendedRedisOptions the client reconnects
 * on READONLY and the limiter counts in the new primary again by itself.
 */
import { compileRules, createLimiter, type Decision, parseRules } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis, type RedisOptions } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const RULES = compileRules(
  parseRules(`
domain: failover
rules:
  - name: per_user
    match: {}
    key: [user]
    limit: {requests: 1000, per: 60s}
    algorithm: fixed_window
  # Writes inside the per-request pcall (fixed_window writes after it): READONLY must still fail the call.
  - name: per_user_log
    match: {}
    key: [user]
    limit: {requests: 1000, per: 60s}
    algorithm: sliding_log
`),
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Failover {
  readonly old: RedisServer;
  readonly next: RedisServer;
  readonly proxy: TcpProxy;
  readonly limiter: ReturnType<typeof createLimiter>;
  readonly prefix: string;
  /** Demotes the old primary to a replica of the new one and moves the address to the new one. */
  failover(): Promise<void>;
}

async function setUp(options: RedisOptions): Promise<Failover> {
  const old = await startRedis();
  const next = await startRedis();
  const proxy = await startTcpProxy(old.port);
  const client = new Redis({ host: proxy.host, port: proxy.port, ...options });
  client.on('error', () => {});
  const admin = new Redis({ host: old.host, port: old.port });
  await Promise.all([ready(client), ready(admin)]);
  const prefix = randomPrefix();
  const store = new RedisStore({ client, prefix, timeoutMs: 1000, logger: { warn: () => {} } });
  const limiter = createLimiter({ rules: RULES, store, timeoutMs: 10_000 });
  cleanups.push(
    () => old.stop(),
    () => next.stop(),
    () => proxy.close(),
    () => client.disconnect(),
    () => admin.disconnect(),
    () => limiter.close(),
  );
  return {
    old,
    next,
    proxy,
    limiter,
    prefix,
    async failover() {
      await admin.replicaof(next.host, String(next.port));
      proxy.retarget(next.port);
    },
  };
}

/** Checks every 50 ms until a decision comes from Redis again (or `tries` run out); returns them all. */
async function untilCounted(limiter: Failover['limiter'], tries: number): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let i = 0; i < tries; i++) {
    const decision = await limiter.check({ user: 'u' });
    decisions.push(decision);
    if (!decision.failedOpen) break;
    await sleep(50);
  }
  return decisions;
}

describe('a demoted primary (READONLY)', () => {
  it('with recommendedRedisOptions: the limiter reconnects and counts in the new primary', async () => {
    const setup = await setUp(recommendedRedisOptions);
    expect((await setup.limiter.check({ user: 'u' })).failedOpen).toBe(false);
    await setup.failover();

    const decisions = await untilCounted(setup.limiter, 100);
    expect(decisions.at(-1)).toMatchObject({ failedOpen: false, allowed: true });
    // At least one request met READONLY (the failover was real) before the reconnection.
    expect(decisions[0]).toMatchObject({ failedOpen: true, reason: 'store_error' });

    const admin = new Redis({ host: setup.next.host, port: setup.next.port });
    cleanups.push(() => admin.disconnect());
    expect(await scanKeys(admin, setup.prefix)).toHaveLength(2); // counting in the new primary
    await admin.quit();
  });

  it('without reconnectOnError (what it fixes): READONLY goes on although the address moved', async () => {
    const { reconnectOnError: _, ...withoutIt } = recommendedRedisOptions;
    const setup = await setUp(withoutIt);
    expect((await setup.limiter.check({ user: 'u' })).failedOpen).toBe(false);
    await setup.failover();
    const decisions = await untilCounted(setup.limiter, 20);
    expect(decisions.every((d) => d.failedOpen)).toBe(true);
  });
});

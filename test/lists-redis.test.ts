/**
 * Lists in a Redis set, read fleet-wide: every limiter answers from its own copy, refreshed in the background
 * (never a Redis call per request), and keeps the last good copy through an outage or a bad entry. Real
 * redis-servers on private loopback ports.
 */
import { compileRules, createLimiter, RulesError } from '@sluice/core';
import type { ValueSet } from '@sluice/core/store';
import { type RedisList, redisList } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix, ready, redisSuite, startRedis } from './support/redis.js';

const redis = redisSuite();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RULES = compileRules({
  rules: [
    { name: 'blocked', match: { ip: { list: 'blocked_ips' } }, action: 'deny' },
    { name: 'per_ip', key: ['ip'], limit: { requests: 100_000, per: '1m' } },
  ],
});

function limiterWith(list: RedisList) {
  cleanups.push(() => list.close());
  const limiter = createLimiter({ rules: RULES, lists: { blocked_ips: list } });
  cleanups.push(() => limiter.close());
  return limiter;
}

/** SSCAN calls the server has answered so far. */
async function sscanCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  return Number(/cmdstat_sscan:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** Resolves with the first refreshed list that passes `test`. */
function refreshedUntil(test: (list: ValueSet) => boolean) {
  let onRefresh: (list: ValueSet) => void = () => {};
  const done = new Promise<ValueSet>((resolve) => {
    onRefresh = (list) => {
      if (test(list)) resolve(list);
    };
  });
  return { done, onRefresh: (list: ValueSet) => onRefresh(list) };
}

const has = (list: ValueSet, ip: string) => list.has(ip, { v6: false, words: [ipv4(ip)], bits: 32 });
const ipv4 = (ip: string) => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);

describe('redisList', () => {
  it('denies members of the set, and makes no Redis call per request', async () => {
    const key = randomPrefix('blocked');
    await redis.admin.sadd(key, '198.51.100.0/24', '2001:db8:bad::/48', '203.0.113.9');
    const list = redisList(redis.client, key, { ttlMs: 600_000 });
    const limiter = limiterWith(list);
    await list.ready;
    const before = await sscanCalls(redis.admin);
    for (let i = 0; i < 200; i++) {
      const decision = await limiter.check({ ip: `198.51.100.${i % 250}` });
      expect(decision).toMatchObject({ allowed: false, action: 'deny', rule: 'blocked' });
    }
    expect((await limiter.check({ ip: '2001:db8:bad:7::/64' })).action).toBe('deny');
    expect((await limiter.check({ ip: '203.0.113.9' })).action).toBe('deny');
    expect((await limiter.check({ ip: '203.0.113.10' })).allowed).toBe(true);
    expect(await sscanCalls(redis.admin)).toBe(before);
  });

  it('reads a large set in SSCAN steps', async () => {
    const key = randomPrefix('big');
    const members = Array.from({ length: 5000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
    await redis.admin.sadd(key, ...members);
    const before = await sscanCalls(redis.admin);
    const list = redisList(redis.client, key, { ttlMs: 600_000 });
    cleanups.push(() => list.close());
    await list.ready;
    expect(list.current.size).toBe(5000);
    expect(has(list.current, '10.19.135.4')).toBe(true);
    expect(has(list.current, '10.20.0.1')).toBe(false);
    expect(await sscanCalls(redis.admin)).toBeGreaterThan(before + 1);
  });

  it('picks up a change within its TTL, in the background', async () => {
    const key = randomPrefix('blocked');
    await redis.admin.sadd(key, '198.51.100.0/24');
    const refreshed = refreshedUntil((list) => has(list, '192.0.2.1'));
    const list = redisList(redis.client, key, { ttlMs: 100, onRefresh: refreshed.onRefresh });
    const limiter = limiterWith(list);
    await list.ready;
    expect((await limiter.check({ ip: '192.0.2.1' })).allowed).toBe(true);
    await redis.admin.sadd(key, '192.0.2.0/24');
    await refreshed.done;
    expect((await limiter.check({ ip: '192.0.2.1' })).action).toBe('deny');
  }, 20_000);

  it('keeps the last good list when an entry is bad, and says which', async () => {
    const key = randomPrefix('blocked');
    await redis.admin.sadd(key, '198.51.100.0/24');
    const errors: Error[] = [];
    const list = redisList(redis.client, key, { ttlMs: 600_000, onError: (error) => errors.push(error) });
    const limiter = limiterWith(list);
    await list.ready;
    await redis.admin.sadd(key, '192.0.2.0/33');
    await list.refresh();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(RulesError);
    expect(errors[0]?.message).toContain('"192.0.2.0/33" has a prefix length outside 0–32');
    expect((await limiter.check({ ip: '198.51.100.1' })).action).toBe('deny');
  });

  it('keeps the last good list while Redis is down', async () => {
    const server = await startRedis();
    cleanups.push(() => server.stop());
    const client = new Redis({ host: server.host, port: server.port, enableOfflineQueue: false });
    cleanups.push(() => client.disconnect());
    await ready(client);
    const key = randomPrefix('blocked');
    await client.sadd(key, '198.51.100.0/24');
    const errors: Error[] = [];
    const list = redisList(client, key, { ttlMs: 600_000, onError: (error) => errors.push(error) });
    const limiter = limiterWith(list);
    await list.ready;
    await server.stop();
    await list.refresh();
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect((await limiter.check({ ip: '198.51.100.1' })).action).toBe('deny');
  }, 20_000);

  it('rebuilds only a set that changed', async () => {
    const key = randomPrefix('blocked');
    await redis.admin.sadd(key, '198.51.100.0/24', '192.0.2.7');
    const built: ValueSet[] = [];
    const list = redisList(redis.client, key, { ttlMs: 600_000, onRefresh: (set) => built.push(set) });
    cleanups.push(() => list.close());
    await list.ready;
    const first = list.current;
    await list.refresh();
    expect(built).toHaveLength(1);
    expect(list.current).toBe(first);
    await redis.admin.srem(key, '192.0.2.7');
    await list.refresh();
    expect(built).toHaveLength(2);
    expect(has(list.current, '192.0.2.7')).toBe(false);
  });

  it('refuses a bad key or TTL at once', () => {
    expect(() => redisList(redis.client, '')).toThrow(/needs the key/);
    expect(() => redisList(redis.client, 'k', { ttlMs: 0 })).toThrow(/ttlMs must be a positive number/);
  });
});

/** RedisStore on one private redis-server: round trips, atomicity, scripts, TTLs, clocks, leases, key safety. */

import { ConfigError, compileRules, createLimiter, parseRules } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName, type Check, type LimitParams } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';

let server: RedisServer;
let client: Redis;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({ host: server.host, port: server.port, connectionName: 'store_under_test' });
  admin = new Redis({ host: server.host, port: server.port });
  await Promise.all([ready(client), ready(admin)]);
});
afterAll(async () => {
  client.disconnect();
  admin.disconnect();
  await server.stop();
});

const SLOW_BOX = { timeoutMs: 5000, breaker: false } as const;

function storeFor(
  prefix = randomPrefix(),
  options: Partial<ConstructorParameters<typeof RedisStore>[0]> = {},
) {
  return new RedisStore({ client, prefix, ...SLOW_BOX, ...options });
}

function check(
  algorithm: AlgorithmName,
  params: Partial<LimitParams> = {},
  extra: Partial<Check> = {},
): Check {
  const base: LimitParams = { limit: 5, windowMs: 60_000, burst: 5 };
  return {
    rule: `r_${algorithm}`,
    tag: 'tagAAAAAAAAAAAAAAAAAAA',
    algorithm,
    params: { ...base, ...params },
    cost: 1,
    mode: 'enforce',
    ...(algorithm === 'concurrency' ? { leaseId: 'lease-1' } : {}),
    ...extra,
  };
}

const RULES = `
domain: test
rules:
  - name: per_minute
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: 100, per: 60s}
  - name: per_day
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: 1000, per: 1d}
    algorithm: quota
  - name: search_global
    match: {route: /search}
    key: []
    global: true
    limit: {requests: 50, per: 1s}
    algorithm: token_bucket
`;

describe('one round trip', () => {
  it('a request matching 3 rules costs exactly one EVALSHA', async () => {
    const limiter = createLimiter({ rules: compileRules(parseRules(RULES)), store: storeFor() });
    const request = { auth: 'api_key', api_key: 'k_8f2a', route: '/search' };
    await limiter.check(request); // loads the script on this connection (EVAL once)

    const list = (await admin.client('LIST')) as string;
    const storeAddress = /addr=(\S+) .*name=store_under_test/.exec(list)?.[1];
    expect(storeAddress).toBeDefined();
    const monitor = await admin.monitor();
    const seen: string[][] = [];
    const fence = 'fence-after-check';
    const fenced = new Promise<void>((resolve) => {
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (args[0]?.toLowerCase() === 'echo' && args[1] === fence) resolve();
        else if (source === storeAddress) seen.push(args);
      });
    });
    await admin.config('RESETSTAT');
    const decision = await limiter.check(request);
    await client.echo(fence);
    await fenced;
    monitor.disconnect();
    const stats = await admin.info('commandstats');

    expect(decision.results.map((r) => r.rule).sort()).toEqual(['per_day', 'per_minute', 'search_global']);
    expect(decision.failedOpen).toBe(false);
    expect(seen.map((args) => args[0]!.toLowerCase())).toEqual(['evalsha']);
    expect(seen.find((args) => args[0]?.toLowerCase() === 'evalsha')?.[2]).toBe('3'); // one key per rule, all in one call
    expect(stats).toMatch(/cmdstat_evalsha:calls=1,/);
    expect(stats).not.toMatch(/cmdstat_eval:/);
  });
});

/** Serialized values (DUMP) of every key under a prefix. */
async function snapshot(prefix: string): Promise<Record<string, string | null>> {
  const keys = await scanKeys(admin, prefix);
  const values: Record<string, string | null> = {};
  for (const key of keys) values[key] = (await admin.dumpBuffer(key))?.toString('base64') ?? null;
  return values;
}

describe('atomic decisions', () => {
  it('a call denied by an enforcing check leaves every key of every algorithm unchanged', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const wide = ALGORITHM_NAMES.map((algorithm) =>
      check(algorithm, { limit: 100, burst: 100 }, { cost: 2 }),
    );
    const narrow = check('fixed_window', { limit: 1 }, { rule: 'narrow' });
    const first = await store.evaluate([...wide, narrow], 1_000_000);
    expect(first.every((r) => r.allowed)).toBe(true);
    const before = await snapshot(prefix);
    expect(Object.keys(before)).toHaveLength(ALGORITHM_NAMES.length + 2); // + narrow, + concurrency cost hash

    const denied = await store.evaluate([...wide, narrow], 1_000_001);
    expect(denied.map((r) => r.allowed)).toEqual([...wide.map(() => true), false]);
    expect(await snapshot(prefix)).toEqual(before);
  });

  it('a shadow check that denies does not stop the others from committing', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const counted = check('fixed_window', { limit: 10 });
    const shadow = check('fixed_window', { limit: 1 }, { rule: 'shadowed', mode: 'shadow' });
    await store.evaluate([counted, shadow], 1_000_000);
    const [again, shadowAgain] = await store.evaluate([counted, shadow], 1_000_000);
    expect(shadowAgain!.allowed).toBe(false);
    expect(again!.remaining).toBe(8);
  });
});

describe('scripts', () => {
  it('recovers from SCRIPT FLUSH mid-run without a failed decision', async () => {
    const limiter = createLimiter({ rules: compileRules(parseRules(RULES)), store: storeFor() });
    const decisions = [];
    for (let round = 0; round < 20; round++) {
      await admin.script('FLUSH');
      const batch = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          limiter.check({ auth: 'api_key', api_key: `k${i}`, route: '/x' }),
        ),
      );
      decisions.push(...batch);
    }
    expect(decisions).toHaveLength(100);
    expect(decisions.filter((d) => d.failedOpen)).toEqual([]);
    expect(decisions.every((d) => d.allowed && d.results.length === 2)).toBe(true);
  });
});

describe('key lifetimes', () => {
  it.each(ALGORITHM_NAMES)(
    '%s: every key it writes has a TTL covering its state, plus a margin',
    async (algorithm) => {
      const prefix = randomPrefix();
      const store = storeFor(prefix);
      const c = check(algorithm, { limit: 5, windowMs: 30_000, burst: 5 }, { cost: 2 });
      const [result] = await store.evaluate([c], Date.now());
      const keys = await scanKeys(admin, prefix);
      expect(keys.length).toBe(algorithm === 'concurrency' ? 2 : 1);
      for (const key of keys) {
        const ttl = await admin.pttl(key);
        expect(ttl, key).toBeGreaterThan(result!.resetMs); // state lives at least as long as it matters
        expect(ttl, key).toBeLessThanOrEqual(result!.resetMs + 1000); // and not forever
      }
    },
  );

  it('a quota with a calendar period expires at the end of the period', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const now = Date.now();
    await store.evaluate([check('quota', { windowMs: 0, period: 'month' })], now);
    const [key] = await scanKeys(admin, prefix);
    const end = new Date(now);
    const monthEnd = Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1, 1);
    const ttl = await admin.pttl(key!);
    expect(ttl).toBeGreaterThan(monthEnd - now - 5000);
    expect(ttl).toBeLessThanOrEqual(monthEnd - now + 1000);
  });
});

describe("clock: 'redis'", () => {
  it('counts in Redis time whatever the gateways believe', async () => {
    const [s0, us0] = await admin.time();
    const intoMinute = (Number(s0) * 1000 + Math.floor(Number(us0) / 1000)) % 60_000;
    if (intoMinute > 59_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 10));
    const prefix = randomPrefix();
    const behind = storeFor(prefix, { clock: 'redis' });
    const ahead = storeFor(prefix, { clock: 'redis' });
    const hourAgo = Date.now() - 3_600_000;
    const tomorrow = Date.now() + 86_400_000;
    const c = check('fixed_window', { limit: 2, windowMs: 60_000 });
    const [a] = await behind.evaluate([c], hourAgo);
    const [b] = await ahead.evaluate([c], tomorrow);
    const [denied] = await behind.evaluate([c], tomorrow);
    expect([a!.allowed, b!.allowed, denied!.allowed]).toEqual([true, true, false]);

    const [seconds, micros] = await admin.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const windowStart = Math.floor(redisNow / 60_000) * 60_000;
    const [key] = await scanKeys(admin, prefix);
    expect(await admin.get(key!)).toMatch(new RegExp(`^(${windowStart}|${windowStart - 60_000}) 2$`));
    expect(denied!.retryAfterMs).toBeGreaterThan(0);
    expect(denied!.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('with the app clock, the same skew splits the count (what the redis clock is for)', async () => {
    const store = storeFor();
    const c = check('fixed_window', { limit: 2, windowMs: 60_000 });
    const now = Date.now();
    await store.evaluate([c], now - 3_600_000);
    await store.evaluate([c], now + 86_400_000);
    const [third] = await store.evaluate([c], now - 3_600_000);
    expect(third!.allowed).toBe(true);
  });
});

describe('concurrency leases', () => {
  it('expire when never released, and release is idempotent', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix, { clock: 'redis' });
    const lease = (id: string) => check('concurrency', { limit: 1, windowMs: 500 }, { leaseId: id });
    const [first] = await store.evaluate([lease('crashed-holder')], 0);
    const [second] = await store.evaluate([lease('waiting')], 0);
    expect(first!.allowed).toBe(true);
    expect(second!.allowed).toBe(false);
    expect(second!.retryAfterMs).toBeGreaterThan(0);
    expect(second!.retryAfterMs).toBeLessThanOrEqual(500);
    await new Promise((resolve) => setTimeout(resolve, second!.retryAfterMs + 20));
    const [third] = await store.evaluate([lease('waiting')], 0);
    expect(third!.allowed).toBe(true);

    const held = {
      rule: 'r_concurrency',
      tag: 'tagAAAAAAAAAAAAAAAAAAA',
      algorithm: 'concurrency' as const,
      id: 'waiting',
      scope: 'store' as const,
    };
    await store.release([held], 0);
    await store.release([held], 0);
    const [key] = await scanKeys(admin, prefix);
    expect(key === undefined || (await admin.zcard(key)) === 0).toBe(true);
  });

  it('keeps the cost of a lease that holds several units until it is released', async () => {
    const prefix = randomPrefix();
    const store = storeFor(prefix);
    const big = check('concurrency', { limit: 3 }, { leaseId: 'big', cost: 2 });
    const small = (id: string) => check('concurrency', { limit: 3 }, { leaseId: id });
    expect((await store.evaluate([big], 1000))[0]!.remaining).toBe(1);
    expect((await store.evaluate([small('a')], 1000))[0]!.allowed).toBe(true);
    expect((await store.evaluate([small('b')], 1000))[0]!.allowed).toBe(false);
    await store.release(
      [{ rule: 'r_concurrency', tag: big.tag, algorithm: 'concurrency', id: 'big', scope: 'store' }],
      1001,
    );
    expect((await store.evaluate([small('b')], 1002))[0]!.remaining).toBe(1);
    expect(await admin.exists(`${prefix}:{${big.tag}}:r_concurrency:cc:w`)).toBe(0);
  });
});

const NASTY = [
  'a:b',
  'a',
  'b',
  'a:b:c',
  '{tag}',
  '}{',
  '{',
  '}',
  '*',
  '[a-z]?*',
  'line\nbreak',
  '\r\n',
  'ключ-🔑-鍵',
  '',
  ' ',
  'x'.repeat(10_240),
  `${'x'.repeat(10_239)}y`,
  '203.0.113.7',
  'sk_live_51HqLyjWDarjtT1zdp7dc',
];

describe('key safety', () => {
  it('hostile descriptor values never collide, never break the hash tag, never appear in a key', async () => {
    const prefix = randomPrefix();
    const rules = compileRules(
      parseRules(`
domain: keys
rules:
  - name: by_key
    match: {}
    key: [api_key]
    limit: {requests: 5, per: 60s}
  - name: by_pair
    match: {}
    key: [ip, api_key]
    limit: {requests: 5, per: 60s}
    algorithm: sliding_log
`),
    );
    const limiter = createLimiter({ rules, store: storeFor(prefix) });
    for (const value of NASTY) {
      const decision = await limiter.check({ api_key: value, ip: value });
      // A fresh counter for every value: a collision would show a smaller remaining count.
      expect(
        decision.results.map((r) => [r.rule, r.allowed, r.remaining]),
        JSON.stringify(value),
      ).toEqual([
        ['by_key', true, 4],
        ['by_pair', true, 4],
      ]);
    }
    // ['a', 'b'] as (ip, api_key) must not meet ('a:b', '') or similar joins.
    const pair = await limiter.check({ ip: 'a:b', api_key: '' });
    expect(pair.results.find((r) => r.rule === 'by_pair')!.remaining).toBe(4);

    const keys = await scanKeys(admin, prefix);
    expect(keys).toHaveLength(NASTY.length * 2 + 1);
    for (const key of keys) {
      expect(key).toMatch(new RegExp(`^${prefix}:\\{[A-Za-z0-9_-]{22}\\}:(by_key:sw|by_pair:sl)$`));
    }
    const everything = keys.join('\n');
    for (const value of [
      '203.0.113.7',
      'sk_live_51HqLyjWDarjtT1zdp7dc',
      'ключ',
      '🔑',
      'line\nbreak',
      'xxxx',
    ]) {
      expect(everything.includes(value), value).toBe(false);
    }
  });

  it('refuses prefixes and tags that could break the hash tag', () => {
    expect(() => new RedisStore({ client, prefix: 'a{b' })).toThrow(ConfigError);
    const store = storeFor();
    const raw = check('fixed_window', {}, { tag: 'user}{input' });
    return expect(store.evaluate([raw], 0)).rejects.toThrow(ConfigError);
  });
});

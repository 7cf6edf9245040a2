/**
 * RedisStore coalescing: the evaluations made in one turn of the event loop go to Redis as one script
 * call, each request keeping its own all-or-nothing; a failed call fails each of its requests.
 */

import { ConfigError, MemoryStore } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName, type Check, type LimitParams } from '@sluice/core/store';
import { RedisStore, type RedisStoreOptions } from '@sluice/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

let server: RedisServer;
let client: Redis;
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  client = new Redis({ host: server.host, port: server.port });
  admin = new Redis({ host: server.host, port: server.port });
  await Promise.all([ready(client), ready(admin)]);
});
afterAll(async () => {
  client.disconnect();
  admin.disconnect();
  await server.stop();
});

function storeFor(options: Partial<RedisStoreOptions> = {}): RedisStore {
  return new RedisStore({ client, prefix: randomPrefix('bt'), timeoutMs: 5000, breaker: false, ...options });
}

function check(tag: string, limit = 100, extra: Partial<Check> = {}): Check {
  return {
    rule: 'per_key',
    tag,
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
    ...extra,
  };
}

/** Script calls counted by the server since the last RESETSTAT (EVALSHA and EVAL). */
async function scriptCalls(): Promise<number> {
  const stats = await admin.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
  return calls;
}

/** The count a fixed_window key holds ("<start> <count>"), 0 when absent. */
async function counted(prefix: string, tag: string, rule = 'per_key'): Promise<number> {
  const value = await admin.get(`${prefix}:{${tag}}:${rule}:fw`);
  return value === null ? 0 : Number(value.split(' ')[1]);
}

describe('one script call per turn', () => {
  it('32 concurrent evaluations of 1 and of 3 checks: one EVALSHA each turn', async () => {
    const store = storeFor();
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0); // loads the script
    for (const width of [1, 3]) {
      await admin.config('RESETSTAT');
      const requests = Array.from({ length: 32 }, (_, i) =>
        Array.from({ length: width }, (_, j) => check(`w${width}t${i}x${j}AAAAAAAAAAAAA`)),
      );
      const results = await Promise.all(requests.map((checks) => store.evaluate(checks, T0)));
      expect(results.map((r) => r.length)).toEqual(requests.map(() => width));
      expect(results.flat().every((r) => r.allowed && r.remaining === 99)).toBe(true);
      expect(await scriptCalls()).toBe(1);
    }
  });

  it('coalesce: false sends one call per request', async () => {
    const store = storeFor({ coalesce: false });
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0);
    await admin.config('RESETSTAT');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.evaluate([check(`solo${i}AAAAAAAAAAAAAAA`)], T0)),
    );
    expect(await scriptCalls()).toBe(8);
  });

  it('a batch that reaches maxChecks leaves at once; the rest follow at the end of the turn', async () => {
    const store = storeFor({ coalesce: { maxChecks: 6 } });
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0);
    await admin.config('RESETSTAT');
    const requests = Array.from({ length: 11 }, (_, i) => [
      check(`capA${i}AAAAAAAAAAAAAAA`),
      check(`capB${i}AAAAAAAAAAAAAAA`),
    ]);
    await Promise.all(requests.map((checks) => store.evaluate(checks, T0)));
    expect(await scriptCalls()).toBe(4); // 3 + 3 + 3 requests full, 2 at the end of the turn
  });

  it('requests on one key in one call run one after the other: the limit holds exactly', async () => {
    const prefix = randomPrefix('bt');
    const store = storeFor({ prefix });
    const tag = 'sharedAAAAAAAAAAAAAAAA';
    const results = await Promise.all(Array.from({ length: 10 }, () => store.evaluate([check(tag, 4)], T0)));
    expect(results.map(([r]) => r!.allowed)).toEqual([true, true, true, true, ...Array(6).fill(false)]);
    expect(results.map(([r]) => r!.remaining)).toEqual([3, 2, 1, 0, ...Array(6).fill(0)]);
    expect(await counted(prefix, tag)).toBe(4);
  });
});

describe('hot keys in one call', () => {
  it('a key shared by every request of a call is read once and written once', async () => {
    const prefix = randomPrefix('bt');
    const store = storeFor({ prefix });
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0);
    await admin.config('RESETSTAT');
    const tag = 'hotAAAAAAAAAAAAAAAAAAA';
    const results = await Promise.all(
      Array.from({ length: 32 }, () => store.evaluate([check(tag, 1000)], T0)),
    );
    expect(results.map(([r]) => r!.remaining)).toEqual(Array.from({ length: 32 }, (_, i) => 999 - i));
    const stats = await admin.info('commandstats');
    expect(stats).toMatch(/cmdstat_get:calls=1,/);
    expect(stats).toMatch(/cmdstat_set:calls=1,/);
    expect(await counted(prefix, tag)).toBe(32);
    expect(await admin.pttl(`${prefix}:{${tag}}:per_key:fw`)).toBeGreaterThan(0);
  });
});

describe('each request keeps its own all-or-nothing', () => {
  it('a denied request in a batch commits nothing; the others in the same batch commit', async () => {
    const prefix = randomPrefix('bt');
    const store = storeFor({ prefix });
    const wide = 'wideAAAAAAAAAAAAAAAAAA';
    const narrow = 'narrowAAAAAAAAAAAAAAAA';
    await store.evaluate([check(narrow, 1, { rule: 'narrow' })], T0); // fills the narrow rule
    const [first, denied, last] = await Promise.all([
      store.evaluate([check(wide)], T0),
      store.evaluate([check(wide), check(narrow, 1, { rule: 'narrow' })], T0),
      store.evaluate([check(wide)], T0),
    ]);
    expect(first![0]!.remaining).toBe(99);
    expect(denied!.map((r) => r.allowed)).toEqual([true, false]);
    expect(denied![0]!.remaining).toBe(98); // decided on what the first request committed
    expect(last![0]!.remaining).toBe(98); // the denied request took nothing
    expect(await counted(prefix, wide)).toBe(2);
    expect(await counted(prefix, narrow, 'narrow')).toBe(1);
  });

  it('a shadow denial in one request does not stop its own commits nor the others', async () => {
    const prefix = randomPrefix('bt');
    const store = storeFor({ prefix });
    const tag = 'shadowAAAAAAAAAAAAAAAA';
    const shadow = check('shadowedAAAAAAAAAAAAAA', 0, { rule: 'shadowed', mode: 'shadow' });
    const results = await Promise.all([
      store.evaluate([check(tag), shadow], T0),
      store.evaluate([check(tag)], T0),
    ]);
    expect(results[0]!.map((r) => r.allowed)).toEqual([true, false]);
    expect(await counted(prefix, tag)).toBe(2);
  });
});

describe('a failed call fails each of its requests', () => {
  it('a batch timeout (DEBUG SLEEP) rejects every request of the batch with ERR_SLUICE_STORE_TIMEOUT', async () => {
    const store = storeFor({ timeoutMs: 50 });
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0);
    const sleeping = admin.debug('SLEEP', 0.4);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => store.evaluate([check(`late${i}AAAAAAAAAAAAAAA`)], T0)),
    );
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as { code?: string }).code)).toEqual(
      Array(12).fill('ERR_SLUICE_STORE_TIMEOUT'),
    );
    expect(store.pending).toBe(12); // counted until Redis answers
    await sleeping;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.pending).toBe(0);
  });

  it('with a fallback, each request of a timed-out batch is answered by it, marked degraded', async () => {
    const store = storeFor({ timeoutMs: 50, fallback: { gateways: 1 } });
    await store.evaluate([check('warmAAAAAAAAAAAAAAAAAA')], T0);
    const sleeping = admin.debug('SLEEP', 0.4);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const tag = 'fallbackAAAAAAAAAAAAAA';
    const results = await Promise.all(Array.from({ length: 5 }, () => store.evaluate([check(tag, 3)], T0)));
    expect(results.map(([r]) => [r!.allowed, r!.degraded])).toEqual([
      [true, 'timeout'],
      [true, 'timeout'],
      [true, 'timeout'],
      [false, 'timeout'],
      [false, 'timeout'],
    ]);
    await sleeping;
  });

  it('a check the script could not read is refused alone, before it joins the call of the others', async () => {
    const store = storeFor();
    const bad = check('badAAAAAAAAAAAAAAAAAAA', 10, { cost: Number.NaN });
    const outcomes = await Promise.allSettled([
      store.evaluate([check('goodAAAAAAAAAAAAAAAAAA')], T0),
      store.evaluate([bad], T0),
      store.evaluate([check('goodBAAAAAAAAAAAAAAAAA')], T0),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConfigError);
  });

  it('maxPending counts requests, not script calls: beyond it they fail at once', async () => {
    const prefix = randomPrefix('bt');
    const store = storeFor({ prefix, maxPending: 5 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.evaluate([check(`bound${i}AAAAAAAAAAAAAA`)], T0)),
    );
    expect(outcomes.map((o) => o.status)).toEqual([
      ...Array(5).fill('fulfilled'),
      ...Array(3).fill('rejected'),
    ]);
    expect((await scanKeys(admin, prefix)).length).toBe(5);
  });
});

describe('time limits', () => {
  it('says its calls are time-limited (the engine adds no timer), unless a fallback of yours may not be', () => {
    const own = { evaluate: async () => [], release: async () => {}, close: async () => {} };
    expect(storeFor().timeLimited).toBe(true);
    expect(storeFor({ fallback: { gateways: 4 } }).timeLimited).toBe(true);
    expect(storeFor({ fallback: new MemoryStore() }).timeLimited).toBe(true);
    expect(storeFor({ fallback: own }).timeLimited).toBe(false);
    expect(storeFor({ fallback: { ...own, timeLimited: true } }).timeLimited).toBe(true);
  });
});

interface Spec {
  algorithm: AlgorithmName;
  params: LimitParams;
  mode: 'enforce' | 'shadow';
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  algorithm: fc.constantFrom(...ALGORITHM_NAMES),
  params: fc
    .record({ limit: fc.integer({ min: 0, max: 6 }), windowMs: fc.constantFrom(1000, 60_000) })
    .map(({ limit, windowMs }) => ({ limit, windowMs, burst: limit })),
  mode: fc.constantFrom('enforce', 'enforce', 'shadow'),
});

const requestArb = fc.record({
  advance: fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1, max: 1500 }),
    fc.double({ min: 0, max: 3, noNaN: true }),
  ),
  picks: fc.uniqueArray(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 }),
  cost: fc.integer({ min: 0, max: 3 }),
});

describe('results equal the unbatched ones', () => {
  it('random bursts of requests (mixed algorithms, shared keys, own times) decide as one by one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(specArb, { minLength: 3, maxLength: 3 }),
        fc.array(requestArb, { minLength: 1, maxLength: 40 }),
        async (specs, requests) => {
          const batched = storeFor();
          const single = storeFor({ coalesce: false });
          let now = T0;
          const calls = requests.map(({ advance, picks, cost }, r) => {
            now += advance;
            const checks = picks.map((pick): Check => {
              const spec = specs[pick % 3]!;
              return {
                rule: `r${pick % 3}`,
                tag: `tag${pick >> 1}AAAAAAAAAAAAAAAAA`.slice(0, 22),
                ...spec,
                cost,
                ...(spec.algorithm === 'concurrency' ? { leaseId: `lease${r}` } : {}),
              };
            });
            return { checks, now };
          });
          const together = await Promise.all(calls.map(({ checks, now }) => batched.evaluate(checks, now)));
          const oneByOne = [];
          for (const { checks, now } of calls) oneByOne.push(await single.evaluate(checks, now));
          expect(together).toEqual(oneByOne);
        },
      ),
      { numRuns: Number(process.env.SLUICE_FC_RUNS ?? 40) },
    );
  });
});

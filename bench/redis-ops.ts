/**
 * RedisStore sizing: bytes per key (MEMORY USAGE and used_memory growth), evaluations per second and Redis
 * script time per evaluation (coalesced, as the store runs by default), per algorithm, on a private
 * redis-server started here (never the shared 6379). Coalescing against one call per request:
 * bench/redis-batching.ts.
 * Run: npx tsx bench/redis-ops.ts   (N keys per algorithm: BENCH_KEYS, default 20000)
 */

import { hashText } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName, type Check } from '@sluice/core/store';
import { luaAlgorithms, RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { ready, startRedis } from '../test/support/redis.js';

const KEYS = Number(process.env.BENCH_KEYS ?? 20_000);
const IN_FLIGHT = 64;
const T0 = Date.now();

/** Throughput: a limit no request reaches. */
const WIDE = { limit: 1_000_000, windowMs: 3_600_000, burst: 1_000_000 };
/**
 * Memory: the seed's 600 per minute, each key's one request costing half the capacity, so that bucket
 * states (kept only while they owe time) are still there when measured.
 */
const SEED = { limit: 600, windowMs: 60_000, burst: 600 };

function check(algorithm: AlgorithmName, i: number, rule = 'bench', params = WIDE, cost = 1): Check {
  return {
    rule,
    tag: hashText(`${algorithm}:${i}`),
    algorithm,
    params,
    cost,
    mode: 'enforce',
    ...(algorithm === 'concurrency' ? { leaseId: `lease-${i}` } : {}),
  };
}

/** Runs `total` calls with IN_FLIGHT of them outstanding at a time; returns calls per second. */
async function rate(total: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) await call(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return total / ((performance.now() - started) / 1000);
}

async function usedMemory(admin: Redis): Promise<number> {
  const info = await admin.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

/**
 * Redis-side microseconds of script time per evaluate() since the last RESETSTAT: the store coalesces
 * concurrent evaluations into one script call, so per call would say little.
 */
async function usecPerEvaluate(admin: Redis, evaluations: number): Promise<number> {
  const stats = await admin.info('commandstats');
  const usec = Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(stats)?.[1]);
  return Math.round((usec / evaluations) * 100) / 100;
}

async function main(): Promise<void> {
  const server = await startRedis();
  const client = new Redis({ host: server.host, port: server.port });
  const admin = new Redis({ host: server.host, port: server.port });
  await Promise.all([ready(client), ready(admin)]);
  const store = new RedisStore({ client, prefix: 'sluice', timeoutMs: 10_000, breaker: false });
  const rows: Record<string, string | number>[] = [];
  try {
    await store.evaluate([check('fixed_window', -1)], T0); // load the script
    for (const algorithm of ALGORITHM_NAMES) {
      await admin.flushall();
      const before = await usedMemory(admin);
      await rate(KEYS, (i) => store.evaluate([check(algorithm, i, 'bench', SEED, 300)], Date.now()));
      const grown = (await usedMemory(admin)) - before;
      const sample = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const names = luaAlgorithms[algorithm].keys.map(
            (suffix) => `sluice:{${check(algorithm, i).tag}}:bench:${suffix}`,
          );
          const usage = await Promise.all(names.map((name) => admin.memory('USAGE', name)));
          return usage.reduce((sum: number, bytes) => sum + Number(bytes ?? 0), 0);
        }),
      );
      const memoryUsage = sample.reduce((a, b) => a + b, 0) / sample.length;
      await admin.flushall();
      await admin.config('RESETSTAT');
      const perSecond = await rate(KEYS, (i) => store.evaluate([check(algorithm, i)], T0));
      const serverUsec = await usecPerEvaluate(admin, KEYS);
      // Hot keys: every call on the same key (a state that grows for sliding_log: one member per ms).
      await admin.config('RESETSTAT');
      const hotPerSecond = await rate(KEYS, () => store.evaluate([check(algorithm, 0, 'hot')], T0));
      rows.push({
        algorithm,
        'MEMORY USAGE B/key': Math.round(memoryUsage),
        'used_memory B/key': Math.round(grown / KEYS),
        'checks/s (new keys)': Math.round(perSecond),
        'Redis µs/evaluate': serverUsec,
        'checks/s (one hot key)': Math.round(hotPerSecond),
        'Redis µs/evaluate (hot)': await usecPerEvaluate(admin, KEYS),
      });
    }
    // A request matching 3 rules (per-minute + per-day on one key, one global): one script call.
    await admin.flushall();
    await admin.config('RESETSTAT');
    const three = await rate(KEYS, (i) =>
      store.evaluate(
        [
          { ...check('sliding_window', i), rule: 'per_minute' },
          { ...check('quota', i), rule: 'per_day' },
          { ...check('token_bucket', 0), rule: 'global' },
        ],
        T0,
      ),
    );
    rows.push({
      algorithm: '3 rules / request',
      'checks/s (new keys)': Math.round(three),
      'Redis µs/evaluate': await usecPerEvaluate(admin, KEYS),
    });
    const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1];
    console.log(
      `redis-server ${version}, ${KEYS} keys per algorithm, ${IN_FLIGHT} calls in flight, one client`,
    );
    console.table(rows);
  } finally {
    await store.close();
    client.disconnect();
    admin.disconnect();
    await server.stop();
  }
}

await main();

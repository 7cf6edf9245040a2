import { randomBytes } from 'node:crypto';
import { createLimiter, type Descriptors, type Lists } from '@sluice/core';
import type { CompiledRules } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import type { Redis } from 'ioredis';

/** What a measured run did to a real Redis. */
export interface MeasuredRun {
  readonly requests: number;
  /** Keys the run made (counted by SCAN on its own prefix, then deleted). */
  readonly redisKeys: number;
  /** `used_memory` growth over the run (from its second request: the first loads the script), bytes. */
  readonly memoryBytes: number;
  /** EVALSHA (and EVAL) calls and their time, from `INFO commandstats`, over the run. */
  readonly calls: number;
  readonly scriptUs: number;
  /** The server's CPU over the run (INFO cpu: used_cpu_user + used_cpu_sys), µs: everything it did, not only scripts. */
  readonly cpuUs: number;
}

/** Options of {@link measureCapacity}. */
export interface MeasureOptions {
  readonly keys: number;
  readonly requests: number;
  /** Requests in flight at once, as a busy gateway has them (so calls coalesce as they do in production). */
  readonly inFlight: number;
  readonly descriptorsOf: (client: number) => Descriptors;
  /** The lists the rules name. */
  readonly lists: Lists;
  /** Told every few hundred requests: how many were sent, and their share of `requests`. */
  readonly progress?: (sent: number, fraction: number) => void;
}

/** Requests between two progress reports. */
const PROGRESS_EVERY = 256;

async function usedMemory(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1] ?? Number.NaN);
}

/** Script calls and their µs so far, EVALSHA and EVAL together (ioredis falls back to EVAL on NOSCRIPT). */
async function scriptStats(client: Redis): Promise<{ calls: number; usec: number }> {
  const stats = await client.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const found of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/g)) {
    calls += Number(found[1]);
    usec += Number(found[2]);
  }
  return { calls, usec };
}

/** The server's CPU time so far, µs. */
async function cpuUs(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
}

/** Every key under the prefix (SCAN, never KEYS: the Redis may be serving traffic). */
async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

/**
 * Runs `requests` requests over `keys` clients through the rules on a RedisStore with a prefix of its own, and
 * reads what they cost from INFO memory and INFO commandstats (differences, so nothing is reset); then deletes
 * its keys. Figures are only clean on a Redis nothing else is using.
 */
export async function measureCapacity(
  client: Redis,
  rules: CompiledRules,
  options: MeasureOptions,
): Promise<MeasuredRun> {
  const prefix = `sluice-capacity-${randomBytes(4).toString('hex')}`;
  const store = new RedisStore({ client, prefix, timeoutMs: 10_000, breaker: false });
  const limiter = createLimiter({ rules, store, lists: options.lists });
  try {
    // The first request (client 0, part of the sample) loads the script before memory and stats are read.
    await limiter.check(options.descriptorsOf(0));
    const memoryBefore = await usedMemory(client);
    const statsBefore = await scriptStats(client);
    const cpuBefore = await cpuUs(client);
    let next = 1;
    const worker = async () => {
      while (next < options.requests) {
        const n = next++;
        await limiter.check(options.descriptorsOf(n % options.keys));
        if (n % PROGRESS_EVERY === 0) options.progress?.(n, n / options.requests);
      }
    };
    await Promise.all(Array.from({ length: options.inFlight }, worker));
    const cpuAfter = await cpuUs(client);
    const memoryAfter = await usedMemory(client);
    const statsAfter = await scriptStats(client);
    const keys = await keysUnder(client, prefix);
    if (keys.length > 0) await client.unlink(...keys);
    return {
      requests: options.requests,
      redisKeys: keys.length,
      memoryBytes: memoryAfter - memoryBefore,
      calls: statsAfter.calls - statsBefore.calls,
      scriptUs: statsAfter.usec - statsBefore.usec,
      cpuUs: cpuAfter - cpuBefore,
    };
  } finally {
    await limiter.close();
  }
}

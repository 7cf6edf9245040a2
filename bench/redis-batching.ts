/**
 * RedisStore coalescing, in-process: CPU per evaluate() of this Node process (process.cpuUsage) and of a
 * private redis-server (INFO cpu), with 32 requests in flight, of 1 and of 3 checks, for each way of
 * sending: one script call per turn (coalesce, the default; with and without corking the socket), one
 * per request (with and without corking), and one per request through ioredis auto-pipelining. Every
 * variant runs in the same process, round after round in rotated order, so that the machine's drift
 * hits them alike; medians with min–max, and ratios to "one call per request".
 * Run: npx tsx bench/redis-batching.ts   (BENCH_ROUNDS, default 7; BENCH_CALLS per run, default 20000)
 */

import { hashText } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, type RedisStoreOptions, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { ready, startRedis } from '../test/support/redis.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const IN_FLIGHT = 32;
const KEYS = 10_000;
const TENANTS = 100;
const WIDE = { limit: 1_000_000_000, windowMs: 60_000, burst: 1_000_000_000 };

interface Variant {
  readonly name: string;
  readonly store: Pick<RedisStoreOptions, 'coalesce'>;
  readonly autoPipelining?: boolean;
}

const BASELINE = 'one call per request (corked)';
const VARIANTS: readonly Variant[] = [
  { name: BASELINE, store: { coalesce: false } },
  { name: 'coalesced, one call per turn (default)', store: {} },
  { name: 'one call per request, auto-pipelining', store: { coalesce: false }, autoPipelining: true },
];

/** The bench's rule sets: per key over 10,000 keys; plus per tenant (100) and one global counter. */
function checksFor(width: 1 | 3, i: number): Check[] {
  const rule = (name: string, tag: string): Check => ({
    rule: name,
    tag,
    algorithm: 'sliding_window',
    params: WIDE,
    cost: 1,
    mode: 'enforce',
  });
  const perKey = rule('per_key', TAGS[i % KEYS]!);
  if (width === 1) return [perKey];
  return [perKey, rule('per_tenant', TENANT_TAGS[i % TENANTS]!), rule('everyone', GLOBAL_TAG)];
}

const TAGS = Array.from({ length: KEYS }, (_, i) => hashText(`key:${i}`));
const TENANT_TAGS = Array.from({ length: TENANTS }, (_, i) => hashText(`tenant:${i}`));
const GLOBAL_TAG = hashText('global');

interface Sample {
  nodeUs: number;
  redisUs: number;
  perSecond: number;
  callsPerEvaluate: number;
}

async function redisCpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
  return read('used_cpu_user') + read('used_cpu_sys');
}

async function scriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
  return calls;
}

/** CALLS evaluations, IN_FLIGHT at a time, each worker sending its next as soon as one is answered. */
async function run(store: RedisStore, admin: Redis, width: 1 | 3, offset: number): Promise<Sample> {
  const redisBefore = await redisCpuSeconds(admin);
  const callsBefore = await scriptCalls(admin);
  let next = 0;
  const worker = async () => {
    while (next < CALLS) {
      const i = offset + next++;
      await store.evaluate(checksFor(width, i), Date.now());
    }
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const redisUsed = (await redisCpuSeconds(admin)) - redisBefore;
  return {
    nodeUs: (used.user + used.system) / CALLS,
    redisUs: (redisUsed * 1e6) / CALLS,
    perSecond: CALLS / (elapsed / 1000),
    callsPerEvaluate: ((await scriptCalls(admin)) - callsBefore) / CALLS,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function spread(values: number[], digits: number): string {
  const f = (v: number) => v.toFixed(digits);
  return `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
}

/** Per round, the baseline's cost over the variant's: how many times cheaper the variant is. */
function ratios(samples: Sample[], baseline: Sample[], cost: (s: Sample) => number): number[] {
  return samples.map((sample, round) => cost(baseline[round]!) / cost(sample));
}

function report(width: 1 | 3, results: Map<string, Sample[]>): void {
  const baseline = results.get(BASELINE)!;
  const rows = VARIANTS.map(({ name }) => {
    const samples = results.get(name)!;
    return {
      variant: name,
      'Node CPU ×cheaper': spread(
        ratios(samples, baseline, (s) => s.nodeUs),
        2,
      ),
      'Redis CPU ×cheaper': spread(
        ratios(samples, baseline, (s) => s.redisUs),
        2,
      ),
      'Node µs/eval': spread(
        samples.map((s) => s.nodeUs),
        1,
      ),
      'Redis µs/eval': spread(
        samples.map((s) => s.redisUs),
        1,
      ),
      'evals/s': Math.round(median(samples.map((s) => s.perSecond))),
      'script calls/eval': median(samples.map((s) => s.callsPerEvaluate)).toFixed(3),
    };
  });
  console.log(`\n${width} check(s) per request, ${IN_FLIGHT} in flight (${ROUNDS} rounds of ${CALLS})`);
  console.table(rows);
}

async function main(): Promise<void> {
  const server = await startRedis();
  const admin = new Redis({ host: server.host, port: server.port });
  const clients = VARIANTS.map(
    (variant) =>
      new Redis({
        host: server.host,
        port: server.port,
        ...recommendedRedisOptions,
        ...(variant.autoPipelining === true ? { enableAutoPipelining: true } : {}),
      }),
  );
  await Promise.all([admin, ...clients].map(ready));
  const stores = VARIANTS.map(
    (variant, v) =>
      new RedisStore({
        client: clients[v]!,
        prefix: 'bench',
        timeoutMs: 10_000,
        breaker: false,
        ...variant.store,
      }),
  );
  try {
    for (const store of stores) await store.evaluate(checksFor(3, 0), Date.now()); // load the script
    const results = new Map<1 | 3, Map<string, Sample[]>>([
      [1, new Map(VARIANTS.map(({ name }) => [name, []]))],
      [3, new Map(VARIANTS.map(({ name }) => [name, []]))],
    ]);
    // Round 0 warms the JIT up and is not reported.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const width of [1, 3] as const) {
        for (let k = 0; k < VARIANTS.length; k++) {
          const v = (round + k) % VARIANTS.length; // rotate who goes first
          const sample = await run(stores[v]!, admin, width, round * CALLS);
          if (round > 0) results.get(width)!.get(VARIANTS[v]!.name)!.push(sample);
        }
      }
    }
    const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1];
    console.log(`redis-server ${version}, Node ${process.version}, sliding_window, limits never reached`);
    report(1, results.get(1)!);
    report(3, results.get(3)!);
  } finally {
    for (const store of stores) await store.close();
    for (const client of [admin, ...clients]) client.disconnect();
    await server.stop();
  }
}

await main();

/**
 * The cost of a renewal round (issue 26): 10,000 open connections' concurrency leases renewed in ONE store call,
 * on MemoryStore and on RedisStore (a private redis-server started here, never the shared 6379), over keys of
 * 1 lease (one connection per client) and of 10 leases each. A round runs every third of the lease, so its
 * cost per second is 3 / lease of this.
 * Run: npx tsx bench/renewal.ts   (connections: BENCH_CONNECTIONS, default 10000; rounds: BENCH_ROUNDS, default 20)
 */

import { hashText, MemoryStore } from '@sluice/core';
import type { Check, Lease, Store } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { ready, startRedis } from '../test/support/redis.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const LEASE_MS = 30_000;
const params = { limit: 1_000, windowMs: LEASE_MS, burst: 1_000 };

/** The leases of CONNECTIONS connections, `perKey` of them per client key, taken in the store. */
async function open(store: Store, perKey: number): Promise<Lease[]> {
  const leases: Lease[] = [];
  const checks: Check[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const tag = hashText(`client-${Math.floor(i / perKey)}`);
    const id = `conn-${i}`;
    checks.push({
      rule: 'sockets',
      tag,
      algorithm: 'concurrency',
      params,
      cost: 1,
      mode: 'enforce',
      leaseId: id,
    });
    leases.push({ rule: 'sockets', tag, algorithm: 'concurrency', id, scope: 'store', leaseMs: LEASE_MS });
  }
  for (let i = 0; i < checks.length; i += 500) await store.evaluate(checks.slice(i, i + 500), Date.now());
  return leases;
}

/** Median and worst ms of a round renewing every lease in one call. */
async function rounds(store: Store, leases: Lease[]): Promise<{ median: number; worst: number }> {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    await store.renew!(leases, Date.now());
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)]!, worst: times[times.length - 1]! };
}

async function main(): Promise<void> {
  const server = await startRedis();
  const client = new Redis({ host: server.host, port: server.port });
  await ready(client);
  try {
    for (const perKey of [1, 10]) {
      const stores: [string, Store][] = [
        ['MemoryStore', new MemoryStore()],
        [
          'RedisStore',
          new RedisStore({ client, prefix: `renew${perKey}`, timeoutMs: 30_000, breaker: false }),
        ],
      ];
      for (const [name, store] of stores) {
        const leases = await open(store, perKey);
        const { median, worst } = await rounds(store, leases);
        const perSecond = (median * 3_000) / LEASE_MS;
        console.log(
          `${name}, ${CONNECTIONS} connections, ${perKey} per key: round median ${median.toFixed(1)} ms, worst ${worst.toFixed(1)} ms; ` +
            `${perSecond.toFixed(2)} ms of store time per second at lease ${LEASE_MS / 1000} s`,
        );
      }
    }
  } finally {
    client.disconnect();
    await server.stop();
  }
}

await main();

/**
 * Many gateways at once: concurrent checks on one key from several limiters, each with its own RedisStore
 * and connection. Nothing is lost or counted twice: the count in Redis equals the allowed requests.
 */

import { compileRules, createLimiter, parseRules } from '@sluice/core';
import type { AlgorithmName, Check } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';

const GATEWAYS = 4;
const PER_GATEWAY = 250;
const T = Date.UTC(2026, 5, 1, 12, 0, 10);

let server: RedisServer;
let clients: Redis[];
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  clients = Array.from({ length: GATEWAYS }, () => new Redis({ host: server.host, port: server.port }));
  admin = new Redis({ host: server.host, port: server.port });
  await Promise.all([...clients, admin].map(ready));
});
afterAll(async () => {
  for (const c of [...clients, admin]) c.disconnect();
  await server.stop();
});

function stores(prefix: string): RedisStore[] {
  return clients.map((client) => new RedisStore({ client, prefix, timeoutMs: 10_000, breaker: false }));
}

/** Fires PER_GATEWAY checks from every gateway at once; returns how many were allowed. */
async function storm(run: (gateway: number, i: number) => Promise<boolean>): Promise<number> {
  const all = clients.flatMap((_, g) => Array.from({ length: PER_GATEWAY }, (_, i) => run(g, i)));
  return (await Promise.all(all)).filter(Boolean).length;
}

describe('concurrent checks on one key from several gateways', () => {
  it.each(['fixed_window', 'sliding_window'])(
    '%s through the engine: allowed = limit = count in Redis',
    async (algorithm) => {
      const prefix = randomPrefix();
      const rules = compileRules(
        parseRules(`
domain: storm
rules:
  - name: per_key
    match: {}
    key: [api_key]
    limit: {requests: 300, per: 60s}
    algorithm: ${algorithm}
`),
      );
      const limiters = stores(prefix).map((store) => createLimiter({ rules, store, clock: () => T }));
      const allowed = await storm(async (g) => (await limiters[g]!.check({ api_key: 'shared' })).allowed);
      expect(allowed).toBe(300);
      const [key] = await scanKeys(admin, prefix);
      const counted = (await admin.get(key!))!.split(' ').map(Number);
      expect(counted.at(-1)).toBe(allowed);
    },
  );

  const counterOf: Record<string, (key: string) => Promise<number>> = {
    sliding_log: async (key) => {
      const members = await admin.zrange(key, 0, -1);
      return members.reduce((sum, member) => sum + Number(member.split(':')[1]), 0);
    },
    token_bucket: async (key) => {
      const [tokens] = (await admin.get(key))!.split(' ').map(Number);
      return (400 * 60_000 - tokens!) / 60_000;
    },
    gcra: async (key) => {
      const [tat, sub] = (await admin.get(key))!.split(' ').map(Number);
      return ((tat! - T) * 400 + sub!) / 60_000;
    },
    concurrency: (key) => admin.zcard(key),
    quota: async (key) => Number((await admin.get(key))!.split(' ')[1]),
  };

  it.each(Object.keys(counterOf))(
    '%s: allowed = limit = what the state in Redis holds',
    async (algorithm) => {
      const prefix = randomPrefix();
      const gateways = stores(prefix);
      const check = (i: number, g: number): Check => ({
        rule: 'per_key',
        tag: 'stormTagAAAAAAAAAAAAAA',
        algorithm: algorithm as AlgorithmName,
        params: { limit: 400, windowMs: 60_000, burst: 400 },
        cost: 1,
        mode: 'enforce',
        ...(algorithm === 'concurrency' ? { leaseId: `g${g}-${i}` } : {}),
      });
      const allowed = await storm(
        async (g, i) => (await gateways[g]!.evaluate([check(i, g)], T))[0]!.allowed,
      );
      expect(allowed).toBe(400);
      const keys = await scanKeys(admin, prefix);
      expect(await counterOf[algorithm]!(keys[0]!)).toBe(allowed);
    },
  );
});

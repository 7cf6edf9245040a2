/** Hot keys on Redis: a sharded rule spreads over hash tags (Cluster slots); local leases cut the calls. */
import { compileRules, createLimiter, type RuleSpec } from '@sluice/core';
import { RedisStore, slotOfTag } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, scanKeys, startRedis } from './support/redis.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis({ host: server.host, port: server.port });
  await ready(redis);
});

afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

const EVERYONE = { name: 'everyone', global: true, key: [], limit: { requests: 200, per: '60s' } };

function limiterFor(rule: Partial<RuleSpec>, prefix: string) {
  const store = new RedisStore({ client: redis, prefix, timeoutMs: 2000 });
  return createLimiter({ rules: compileRules({ rules: [{ ...EVERYONE, ...rule } as RuleSpec] }), store });
}

async function scriptCalls(): Promise<number> {
  const stats = await redis.info('commandstats');
  return (
    Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
    Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)
  );
}

describe('hot keys on Redis', () => {
  it('shards: the counter lives under N hash tags, in distinct slots, and the limit still holds', async () => {
    const prefix = randomPrefix('sh');
    const limiter = limiterFor({ shards: 8 }, prefix);
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await limiter.check({})).allowed) allowed++;
    expect(allowed).toBe(200); // 8 sub-counters of 25, every one filled
    const tags = new Set((await scanKeys(redis, prefix)).map((key) => /\{([^}]+)\}/.exec(key)![1]!));
    expect(tags.size).toBe(8);
    expect(new Set([...tags].map(slotOfTag)).size).toBeGreaterThan(1);
  });

  it('leases: one script call per batch of K checks', async () => {
    const limiter = limiterFor({ lease: { batch: 20 } }, randomPrefix('ls'));
    const before = await scriptCalls();
    let allowed = 0;
    for (let i = 0; i < 100; i++) if ((await limiter.check({})).allowed) allowed++;
    expect(allowed).toBe(100);
    expect((await scriptCalls()) - before).toBe(5);
  });

  it('leases: gateways sharing Redis never spend more than the store granted in one window', async () => {
    const prefix = randomPrefix('lg');
    const gateways = [1, 2, 3, 4].map(() => limiterFor({ lease: { batch: 15 } }, prefix));
    let allowed = 0;
    for (let i = 0; i < 400; i++) if ((await gateways[i % 4]!.check({})).allowed) allowed++;
    // Units are counted in Redis when taken: 13 batches of 15 fit in 200, the rest are refused.
    expect(allowed).toBe(195);
  });
});

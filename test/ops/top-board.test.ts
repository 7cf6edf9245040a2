/**
 * The board on a real redis-server (RedisStore.board): each gateway's latest board under one hash tag, read back
 * while its TTL lasts and dropped after it; a limiter publishing with `watch: {publish: true}` one call per interval.
 */
import { compileRules, createLimiter, type GatewayBoard, mergeBoards, parseBoard } from '@sluice/core';
import { boardKeys, RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite, scanKeys, scriptCalls } from '../support/redis.js';

const redis = redisSuite();

const RULES = compileRules({
  domain: 'board',
  rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 2, per: '60s' } }],
});

async function boardsOf(store: RedisStore, now = Date.now()): Promise<GatewayBoard[]> {
  return (await store.board.read(now))
    .map((text) => parseBoard(text)!)
    .sort((a, b) => a.gateway.localeCompare(b.gateway));
}

describe('RedisStore.board', () => {
  it('keeps each gateway’s latest board until its TTL runs out, in two keys of one hash tag', async () => {
    const prefix = randomPrefix('board');
    const store = new RedisStore({ client: redis.client, prefix });
    const t = 1_000_000;
    await store.board.publish('gw-a', JSON.stringify({ n: 1 }), 5_000, t);
    await store.board.publish('gw-b', JSON.stringify({ n: 2 }), 1_000, t);
    await store.board.publish('gw-a', JSON.stringify({ n: 3 }), 5_000, t + 10);
    expect((await store.board.read(t + 500)).sort()).toEqual(['{"n":2}', '{"n":3}']);
    // gw-b's board is past its TTL: not read, and dropped at the next publish.
    expect(await store.board.read(t + 1_500)).toEqual(['{"n":3}']);
    await store.board.publish('gw-a', JSON.stringify({ n: 4 }), 5_000, t + 2_000);
    expect(await redis.admin.hkeys(boardKeys(prefix)[0])).toEqual(['gw-a']);
    expect(await scanKeys(redis.admin, prefix)).toEqual([...boardKeys(prefix)].sort());
    // Both keys expire with the longest-lived board: nothing is left behind by a fleet that went away.
    const ttl = await redis.admin.pttl(boardKeys(prefix)[0]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await store.close();
  });

  it('a limiter with watch.publish publishes its board once per interval, tags only, and a reader merges it', async () => {
    const prefix = randomPrefix('board');
    const store = new RedisStore({ client: redis.client, prefix });
    const limiter = createLimiter({
      rules: RULES,
      store,
      keySecret: 's3cret',
      watch: { publish: true, intervalMs: 200, gateway: 'gw-one' },
    });
    try {
      for (let i = 0; i < 5; i++) await limiter.check({ api_key: 'customer-42', route: '/search' });
      let boards: GatewayBoard[] = [];
      for (let i = 0; i < 200 && boards[0]?.rules[0]?.requests !== 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        boards = await boardsOf(store);
      }
      expect(boards.map((b) => b.gateway)).toEqual(['gw-one']);
      const rule = mergeBoards(boards).rules[0]!;
      expect(rule).toMatchObject({ rule: 'per_key', requests: 5, denied: 3 });
      expect(rule.keys.keys).toHaveLength(1);
      expect(rule.keys.keys[0]!.count).toBe(5);
      const raw = await redis.admin.hget(boardKeys(prefix)[0], 'gw-one');
      expect(raw).not.toContain('customer-42');
      expect(raw).toContain(rule.keys.keys[0]!.tag);
      // One script call per interval: over ~1 s, about 5 publishes, with no request made meanwhile.
      const before = await scriptCalls(redis.admin);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const publishes = (await scriptCalls(redis.admin)) - before;
      expect(publishes).toBeGreaterThanOrEqual(2);
      expect(publishes).toBeLessThanOrEqual(6);
    } finally {
      await limiter.close();
      await store.close();
    }
  });
});

/**
 * Rule policies inside one store call with other rules, alike on MemoryStore and RedisStore (a private
 * redis-server): what a denial by another rule does to a policy (nothing is charged, no marker is left), what
 * a denial by the policy's own rule records (its violation, its penalty) although the request is refused, a
 * shadow rule's ban, and MemoryStore's bound holding idempotency markers too.
 */

import { hashText, MemoryStore } from '@sluice/core';
import type { Check, CheckPolicy, Store } from '@sluice/core/store';
import { RedisStore, slotOfTag } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { clientKinds } from './support/client-kinds.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const redis = redisSuite();
const kinds = clientKinds();
const T0 = Date.UTC(2026, 10, 30, 12);

const STORES: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  [
    'RedisStore',
    () =>
      new RedisStore({ client: redis.client, prefix: randomPrefix('pst'), timeoutMs: 5000, breaker: false }),
  ],
];

const params = (limit: number) => ({ limit, windowMs: 60_000, burst: limit });

/** A fixed_window check of `rule` on the key `tag`, with a policy. */
function check(
  rule: string,
  tag: string,
  limit: number,
  policy?: CheckPolicy,
  extra: Partial<Check> = {},
): Check {
  return {
    rule,
    tag: hashText(tag),
    algorithm: 'fixed_window',
    params: params(limit),
    cost: 1,
    mode: 'enforce',
    ...(policy === undefined ? {} : { policy }),
    ...extra,
  };
}

describe.each(STORES)('policies in one call with other rules, on %s', (_, storeOf) => {
  it('a request refused by another rule is not charged and leaves no idempotency marker', async () => {
    const store = storeOf();
    const idem = { idempotentMs: 600_000 };
    const orders = (id: string) => check('orders', 'k1', 5, idem, { idempotencyId: hashText(id) });
    const strict = check('strict', 'k1', 1);
    expect((await store.evaluate([orders('a'), strict], T0)).map((r) => r.allowed)).toEqual([true, true]);
    // strict now denies: the whole request is refused, orders charges nothing and marks nothing.
    const refused = await store.evaluate([orders('b'), strict], T0 + 1);
    expect(refused.map((r) => r.allowed)).toEqual([true, false]);
    // A minute on (strict's window is over), the retry of b is charged: it was never marked.
    const retried = await store.evaluate([orders('b'), strict], T0 + 60_000);
    expect(retried[0]).toMatchObject({ allowed: true, remaining: 4 });
    expect(retried[0]!.replayed).toBeUndefined();
    // A retry of a, which was charged, is answered from its marker.
    const [again] = await store.evaluate([orders('a')], T0 + 60_001);
    expect(again).toMatchObject({ allowed: true, remaining: 4, replayed: true });
    await store.close();
  });

  it('a denial by its own rule records the violation and the penalty, although nothing else commits', async () => {
    const store = storeOf();
    const policy: CheckPolicy = { ban: { after: 2, withinMs: 60_000, forMs: 600_000 }, penalty: 3 };
    const login = () => check('login', 'k2', 3, policy, { cost: 2 });
    const other = check('per_ip', 'k2', 100);
    expect((await store.evaluate([login(), other], T0)).map((r) => r.remaining)).toEqual([1, 99]);
    // login denies (cost 2, 1 left): the penalty takes the last unit, the other rule commits nothing.
    const denied = await store.evaluate([login(), other], T0 + 1);
    expect(denied[0]).toMatchObject({ allowed: false, remaining: 0 });
    expect(denied[1]).toMatchObject({ allowed: true, remaining: 98 });
    const [, untouched] = await store.evaluate([check('login', 'k2', 3, policy, { cost: 0 }), other], T0 + 2);
    expect(untouched!.remaining).toBe(98);
    // Second violation: banned for 10 minutes, the answer says so.
    const [banned] = await store.evaluate([login()], T0 + 3);
    expect(banned).toMatchObject({ allowed: false, bannedUntil: T0 + 3 + 600_000, banStarted: true });
    expect(banned!.retryAfterMs).toBe(600_000);
    await store.close();
  });

  it('a rule without a policy beside one answered from a marker is charged as usual', async () => {
    const store = storeOf();
    const orders = check('orders', 'k4', 5, { idempotentMs: 60_000 }, { idempotencyId: hashText('x') });
    await store.evaluate([orders], T0);
    expect((await store.evaluate([orders], T0 + 1))[0]).toMatchObject({ replayed: true });
    const plain = check('plain', 'k4', 5);
    // The plain rule comes first: its place in the call is where the replayed check was in the last one.
    expect((await store.evaluate([plain, orders], T0 + 2))[0]).toMatchObject({ allowed: true, remaining: 4 });
    expect((await store.evaluate([plain, orders], T0 + 3))[0]).toMatchObject({ allowed: true, remaining: 3 });
    await store.close();
  });

  it('a shadow rule bans too: reported, and the request goes through', async () => {
    const store = storeOf();
    const policy: CheckPolicy = { ban: { after: 1, withinMs: 60_000, forMs: 60_000 } };
    const shadow = () => check('shadow_login', 'k3', 1, policy, { mode: 'shadow' });
    const per = check('per_ip', 'k3', 100);
    await store.evaluate([shadow(), per], T0);
    const [wouldBan, counted] = await store.evaluate([shadow(), per], T0 + 1);
    expect(wouldBan).toMatchObject({ allowed: false, banStarted: true, bannedUntil: T0 + 60_001 });
    // A shadow denial blocks nothing: the enforcing rule committed.
    expect(counted).toMatchObject({ allowed: true, remaining: 98 });
    await store.close();
  });
});

describe('MemoryStore bound', () => {
  it('holds idempotency markers within maxKeys, as it holds counters', async () => {
    const store = new MemoryStore({ maxKeys: 100 });
    const policy: CheckPolicy = { idempotentMs: 600_000 };
    for (let i = 0; i < 1000; i++) {
      await store.evaluate(
        [check('orders', `key${i % 10}`, 1_000, policy, { idempotencyId: hashText(`${i}`) })],
        T0,
      );
    }
    expect(store.size).toBeLessThanOrEqual(100);
    expect(store.health().evictions).toBeGreaterThan(0);
  });
});

describe.each(['ioredis, Cluster', 'node-redis, Cluster'] as const)('on a Redis Cluster (%s)', (kind) => {
  it('policy keys share their counter slot: a request over several slots bans, marks and replays', async () => {
    const store = new RedisStore({
      client: kinds.clientOf(kind),
      prefix: randomPrefix('pcl'),
      timeoutMs: 5000,
    });
    const login = check('login', 'user-1', 1, { ban: { after: 1, withinMs: 60_000, forMs: 60_000 } });
    const order = (id: string) =>
      check('orders', 'tenant-9', 10, { idempotentMs: 60_000 }, { idempotencyId: hashText(id) });
    expect(slotOfTag(login.tag)).not.toBe(slotOfTag(order('o-1').tag));
    expect((await store.evaluate([login, order('o-1')], T0)).map((r) => r.allowed)).toEqual([true, true]);
    const [banned, charged] = await store.evaluate([login, order('o-2')], T0 + 1);
    expect(banned).toMatchObject({ allowed: false, banStarted: true, bannedUntil: T0 + 60_001 });
    // The other slot group commits on its own (slot groups commit apart): o-2 was charged and marked.
    expect(charged).toMatchObject({ allowed: true, remaining: 8 });
    const [stillBanned, replayed] = await store.evaluate([login, order('o-2')], T0 + 2);
    expect(stillBanned).toMatchObject({ allowed: false, banStarted: false, retryAfterMs: 59_999 });
    expect(replayed).toMatchObject({ allowed: true, replayed: true, remaining: 8 });
    await store.close();
  });
});

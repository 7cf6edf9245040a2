/**
 * A bad key on a real 3-master Redis Cluster: a request whose checks span two slots fails whole when one
 * slot's state is unreadable; the lease its other slot took is handed back, the bad key is removed, and
 * the other requests of the same calls are decided normally, even those after it on the same key.
 */

import { hashText } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { KeyStateError, RedisStore, slotOfTag } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { clusterSuite } from './support/cluster-suite.js';
import { randomPrefix } from './support/redis.js';

const suite = clusterSuite();

function lease(user: string): Check {
  return {
    rule: 'jobs',
    tag: hashText(`user:${user}`),
    algorithm: 'concurrency',
    params: { limit: 5, windowMs: 60_000, burst: 5 },
    cost: 1,
    mode: 'enforce',
    leaseId: `lease-${user}`,
  };
}

const everyone: Check = {
  rule: 'everyone',
  tag: hashText('everyone'),
  algorithm: 'fixed_window',
  params: { limit: 1000, windowMs: 60_000, burst: 1000 },
  cost: 1,
  mode: 'enforce',
};

describe('a key of the wrong type on a Cluster', () => {
  it('fails the request whose other slot committed, hands its lease back, and spares the others', async () => {
    const prefix = randomPrefix('hc');
    const store = new RedisStore({
      client: suite.client,
      prefix,
      timeoutMs: 5000,
      logger: { warn: () => {} },
    });
    const victim = lease('victim');
    expect(slotOfTag(victim.tag)).not.toBe(slotOfTag(everyone.tag));
    const other = lease('other');
    await store.evaluate([everyone], Date.now());
    const globalKey = `${prefix}:{${everyone.tag}}:everyone:fw`;
    await suite.client.del(globalKey);
    await suite.client.lpush(globalKey, 'x');

    // Both requests share the global slot's call. The first reads the bad key and fails; the key is
    // deleted there and then, so the second, later in the same call, is decided and counted afresh.
    const loner = lease('loner');
    const [a, b, c] = await Promise.allSettled([
      store.evaluate([victim, everyone], Date.now()),
      store.evaluate([other, everyone], Date.now()),
      store.evaluate([loner], Date.now()),
    ]);
    expect(a).toMatchObject({ status: 'rejected', reason: { rules: ['everyone'] } });
    expect(a.status === 'rejected' && a.reason instanceof KeyStateError).toBe(true);
    expect(b).toMatchObject({
      status: 'fulfilled',
      value: [{ allowed: true }, { allowed: true, remaining: 999 }],
    });
    expect(c).toMatchObject({ status: 'fulfilled', value: [{ allowed: true, remaining: 4 }] });

    // The lease the failed request took in its own slot is handed back; the others' stay.
    const held = async (check: Check) => suite.client.zcard(`${prefix}:{${check.tag}}:jobs:cc`);
    await expect.poll(() => held(victim), { timeout: 5000 }).toBe(0);
    expect(await held(other)).toBe(1);
    expect(await held(loner)).toBe(1);

    // Repaired: the next request is decided, counting on from the fresh global counter.
    expect(await suite.client.type(globalKey)).toBe('string');
    const again = await store.evaluate([victim, everyone], Date.now());
    expect(again.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 4],
      [true, 998],
    ]);
    expect(store.health().breaker).toBe('closed');
  });
});

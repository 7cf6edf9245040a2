/** RedisStore over a real 3-master Redis Cluster started by the harness. */

import { compileRules, createLimiter, hashText, parseRules } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, slotOfTag } from '@sluice/redis';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { clusterSuite } from './support/cluster-suite.js';
import { randomPrefix, ready } from './support/redis.js';

const suite = clusterSuite();

function storeFor(prefix = randomPrefix()): RedisStore {
  return new RedisStore({ client: suite.client, prefix, timeoutMs: 5000, breaker: false });
}

/** EVALSHA + EVAL calls per node since the last reset. */
async function scriptCalls(): Promise<number[]> {
  return Promise.all(
    suite.nodes.map(async (node) => {
      const stats = await node.info('commandstats');
      const calls = [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)];
      return calls.reduce((sum, match) => sum + Number(match[1]), 0);
    }),
  );
}

async function resetStats(): Promise<void> {
  await Promise.all(suite.nodes.map((node) => node.config('RESETSTAT')));
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Two tags whose hash slots live on different masters. */
function tagsOnDifferentSlots(): [string, string] {
  const first = hashText('tenant-a');
  for (let i = 0; ; i++) {
    const other = hashText(`tenant-b-${i}`);
    if (Math.floor(slotOfTag(other) / 5462) !== Math.floor(slotOfTag(first) / 5462)) return [first, other];
  }
}

describe('one call per slot group', () => {
  const rules = compileRules(
    parseRules(`
domain: cluster
rules:
  - name: key_minute
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: 600, per: 60s}
  - name: key_day
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: 10000, per: 1d}
    algorithm: quota
  - name: search_global
    match: {route: /search}
    key: []
    global: true
    limit: {requests: 5000, per: 1s}
    algorithm: token_bucket
`),
  );

  it("a request's rules on one key share a slot: one call; a global rule adds one more, sent at once", async () => {
    const limiter = createLimiter({ rules, store: storeFor() });
    const keyed = { auth: 'api_key', api_key: 'k_8f2a', route: '/users' };
    const withGlobal = { ...keyed, route: '/search' };
    await limiter.check(withGlobal); // loads the script on the connections
    await resetStats();
    const one = await limiter.check(keyed);
    expect(one.results).toHaveLength(2);
    expect(sum(await scriptCalls())).toBe(1);

    const explained = limiter.explain(withGlobal).rules;
    const slots = new Set(explained.map((rule) => slotOfTag(rule.tag!)));
    await resetStats();
    const two = await limiter.check(withGlobal);
    expect(two.results).toHaveLength(3);
    expect(two.failedOpen).toBe(false);
    expect(sum(await scriptCalls())).toBe(slots.size);
  });

  it('a denial in one slot group cannot stop another group from committing (the documented over-count)', async () => {
    const [tagA, tagB] = tagsOnDifferentSlots();
    const store = storeFor();
    const wide: Check = {
      rule: 'wide',
      tag: tagA,
      algorithm: 'fixed_window',
      params: { limit: 100, windowMs: 60_000, burst: 100 },
      cost: 1,
      mode: 'enforce',
    };
    const narrow: Check = {
      ...wide,
      rule: 'narrow',
      tag: tagB,
      params: { limit: 1, windowMs: 60_000, burst: 1 },
    };
    const now = 1_000_000;
    await store.evaluate([wide, narrow], now);
    const denied = await store.evaluate([wide, narrow], now);
    expect(denied.map((r) => r.allowed)).toEqual([true, false]);
    const [after] = await store.evaluate([wide], now);
    // Counted: the first call, the denied one (the over-count) and this one; one server would say 98.
    expect(after!.remaining).toBe(97);
  });

  it('gives back a lease taken in one slot group when another group denies', async () => {
    const [tagA, tagB] = tagsOnDifferentSlots();
    const store = storeFor();
    const lease = (id: string): Check => ({
      rule: 'slots',
      tag: tagA,
      algorithm: 'concurrency',
      params: { limit: 1, windowMs: 60_000, burst: 1 },
      cost: 1,
      mode: 'enforce',
      leaseId: id,
    });
    const narrow: Check = {
      rule: 'narrow',
      tag: tagB,
      algorithm: 'fixed_window',
      params: { limit: 1, windowMs: 60_000, burst: 1 },
      cost: 1,
      mode: 'enforce',
    };
    const now = 2_000_000;
    await store.evaluate([narrow], now);
    const denied = await store.evaluate([lease('stranded'), narrow], now);
    expect(denied.map((r) => r.allowed)).toEqual([true, false]);
    let next = false;
    for (let i = 0; i < 50 && !next; i++) next = (await store.evaluate([lease('next')], now))[0]!.allowed;
    expect(next).toBe(true); // the refused request's lease did not keep the slot
  });
});

describe('many gateways on a Cluster', () => {
  it('concurrent checks on one key: allowed = limit = the count in Redis', async () => {
    const prefix = randomPrefix();
    const gateways = Array.from({ length: 3 }, () => new Cluster(suite.handle.nodes));
    await Promise.all(gateways.map(ready));
    const stores = gateways.map(
      (c) => new RedisStore({ client: c, prefix, timeoutMs: 10_000, breaker: false }),
    );
    const tag = hashText('hot-key');
    const check: Check = {
      rule: 'hot',
      tag,
      algorithm: 'fixed_window',
      params: { limit: 250, windowMs: 60_000, burst: 250 },
      cost: 1,
      mode: 'enforce',
    };
    const now = 3_000_020;
    const answers = await Promise.all(
      stores.flatMap((store) => Array.from({ length: 200 }, () => store.evaluate([check], now))),
    );
    const allowed = answers.filter(([r]) => r!.allowed).length;
    expect(allowed).toBe(250);
    expect(await suite.client.get(`${prefix}:{${tag}}:hot:fw`)).toBe(`3000000 ${allowed}`);
    for (const c of gateways) c.disconnect();
  });
});

describe("clock: 'redis' on a Cluster", () => {
  it('counts in the time of the node that owns the slot, whatever the gateways believe', async () => {
    const store = new RedisStore({
      client: suite.client,
      prefix: randomPrefix(),
      clock: 'redis',
      timeoutMs: 5000,
      breaker: false,
    });
    const check: Check = {
      rule: 'skewed',
      tag: hashText('skewed-gateways'),
      algorithm: 'sliding_window',
      params: { limit: 2, windowMs: 3_600_000, burst: 2 },
      cost: 1,
      mode: 'enforce',
    };
    const now = Date.now();
    const answers = [
      await store.evaluate([check], now - 86_400_000),
      await store.evaluate([check], now + 86_400_000),
      await store.evaluate([check], now),
    ];
    expect(answers.map(([r]) => r!.allowed)).toEqual([true, true, false]);
  });
});

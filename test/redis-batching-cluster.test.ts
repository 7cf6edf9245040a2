/** RedisStore coalescing on a real 3-master Redis Cluster: one script call per hash slot per turn. */

import { hashText } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RedisStore, slotOfTag } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { clusterSuite } from './support/cluster-suite.js';
import { randomPrefix } from './support/redis.js';

const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

const suite = clusterSuite();

async function scriptCalls(): Promise<number> {
  let calls = 0;
  for (const node of suite.nodes) {
    const stats = await node.info('commandstats');
    for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(match[1]);
  }
  return calls;
}

function check(rule: string, tag: string, limit = 100): Check {
  return {
    rule,
    tag,
    algorithm: 'fixed_window',
    params: { limit, windowMs: 60_000, burst: limit },
    cost: 1,
    mode: 'enforce',
  };
}

describe('coalescing on a Cluster', () => {
  it('concurrent requests go as one call per slot; a global rule shared by all is one call', async () => {
    const store = new RedisStore({
      client: suite.client,
      prefix: randomPrefix('bc'),
      timeoutMs: 5000,
      breaker: false,
    });
    const global = hashText('everyone');
    const keyTags = Array.from({ length: 20 }, (_, i) => hashText(`key-${i}`));
    await store.evaluate([check('per_key', keyTags[0]!), check('everyone', global)], T0); // loads the script
    await Promise.all(suite.nodes.map((node) => node.config('RESETSTAT')));
    const results = await Promise.all(
      keyTags.map((tag) => store.evaluate([check('per_key', tag), check('everyone', global, 15)], T0)),
    );
    const slots = new Set([...keyTags, global].map((tag) => slotOfTag(tag)));
    expect(await scriptCalls()).toBe(slots.size);
    // The global counter saw the requests one after the other: 14 fit beside the loading request.
    expect(results.filter((r) => r[1]!.allowed)).toHaveLength(14);
    // Each per-key check is its own slot group, decided on its own (the documented Cluster split).
    expect(results.every((r) => r[0]!.allowed)).toBe(true);
  });
});

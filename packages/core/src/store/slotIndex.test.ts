import { describe, expect, it } from 'vitest';
import { NONE } from './segmentedLru.js';
import { KEYS_PER_SHARD, SlotIndex } from './slotIndex.js';
import { hashText } from './tags.js';

function filled(count: number, tag: (i: number) => string, rule = 'per_key'): SlotIndex {
  const index = new SlotIndex();
  index.grow(count);
  for (let i = 0; i < count; i++) index.add(rule, tag(i), i);
  return index;
}

describe('SlotIndex', () => {
  it('keeps every Map small at any count, whatever the tags look like, so no rebuild stalls the loop', () => {
    const count = 200_000;
    for (const tag of [(i: number) => hashText(`k${i}`), (i: number) => `key-${i}`]) {
      const index = new SlotIndex();
      index.grow(count);
      for (let i = 0; i < count; i++) {
        index.add('per_key', tag(i), i);
        // Maps are split one at a time as tags come: never more than about twice their share in one.
        if (i % 10_007 === 0) expect(index.shards().largest).toBeLessThan(KEYS_PER_SHARD * 2.5);
      }
      expect(index.shards().count).toBe(Math.ceil(count / KEYS_PER_SHARD));
      expect(index.shards().largest).toBeLessThan(KEYS_PER_SHARD * 2.5);
      for (let i = 0; i < count; i += 997) expect(index.find('per_key', tag(i))).toBe(i);
    }
    expect(filled(1000, (i) => `t${i}`).shards()).toEqual({ largest: 1000, count: 1 }); // a small store: one Map
  });

  it('keeps rules with the same tag apart, and removes any of them', () => {
    const index = new SlotIndex();
    index.grow(10);
    for (const [slot, rule] of ['a', 'b', 'c', 'd'].entries()) index.add(rule, 'shared', slot);
    index.add('a', 'other', 4);
    expect(['a', 'b', 'c', 'd', 'e'].map((rule) => index.find(rule, 'shared'))).toEqual([0, 1, 2, 3, NONE]);
    index.remove(1); // in the middle of the chain
    index.remove(3); // its head
    expect(['a', 'b', 'c', 'd'].map((rule) => index.find(rule, 'shared'))).toEqual([0, NONE, 2, NONE]);
    index.remove(0);
    index.remove(2);
    expect(index.find('c', 'shared')).toBe(NONE);
    expect(index.shards().largest).toBe(1); // 'shared' is gone from its Map
    expect(index.find('a', 'other')).toBe(4);
    index.add('b', 'shared', 1); // a freed slot reused
    expect(index.find('b', 'shared')).toBe(1);
    index.clear();
    expect(index.find('a', 'other')).toBe(NONE);
  });
});

import { describe, expect, it } from 'vitest';
import { hashText } from '../keys.js';
import { KEYS_PER_SHARD, SlotIndex } from './slotIndex.js';

/** Fills an index with `count` tags of one rule; returns the distinct Maps they went to. */
function fill(index: SlotIndex, count: number, tag: (i: number) => string): Set<Map<string, number>> {
  const maps = new Set<Map<string, number>>();
  for (let i = 0; i < count; i++) {
    const map = index.mapFor('per_key', tag(i));
    map.set(tag(i), i);
    maps.add(map);
  }
  return maps;
}

describe('SlotIndex', () => {
  it('keeps every Map small at maxKeys, whatever the tags look like, so no rebuild stalls the loop', () => {
    const maxKeys = 200_000;
    for (const tag of [(i: number) => hashText(`k${i}`), (i: number) => `key-${i}`]) {
      const index = new SlotIndex(maxKeys);
      const maps = fill(index, maxKeys, tag);
      expect(maps.size).toBe(64); // 200,000 / 4096, rounded up to a power of two
      const largest = Math.max(...[...maps].map((map) => map.size));
      expect(largest).toBeLessThan(KEYS_PER_SHARD * 1.25);
      for (let i = 0; i < maxKeys; i += 997) expect(index.get('per_key', tag(i))).toBe(i);
    }
  });

  it('keeps rules apart, has one Map for a small store, and forgets on clear', () => {
    const index = new SlotIndex(1000);
    expect(fill(index, 1000, (i) => `t${i}`).size).toBe(1);
    index.mapFor('other', 't1').set('t1', 7);
    expect(index.get('per_key', 't1')).toBe(1);
    expect(index.get('other', 't1')).toBe(7);
    expect(index.get('other', 't2')).toBeUndefined();
    index.clear();
    expect(index.get('per_key', 't1')).toBeUndefined();
  });
});

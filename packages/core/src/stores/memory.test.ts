import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Check } from '../types.js';
import { MemoryStore } from './memory.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const WINDOW = { limit: 2, windowMs: 60_000, burst: 2 };

function check(tag: string, rule = 'r'): Check {
  return { rule, tag, algorithm: 'fixed_window', params: WINDOW, cost: 1, mode: 'enforce' };
}

/** Remaining units of a counter after one more request (2 when the store forgot it, 0 when it is full). */
async function hit(store: MemoryStore, tag: string, now = T0, rule = 'r'): Promise<number> {
  const [result] = await store.evaluate([check(tag, rule)], now);
  return result!.remaining;
}

describe('MemoryStore LRU', () => {
  it('evicts the least recently used counter when full', async () => {
    const store = new MemoryStore({ maxKeys: 2 });
    await hit(store, 'a');
    await hit(store, 'b');
    await hit(store, 'c'); // evicts a
    expect(store.size).toBe(2);
    expect(await hit(store, 'b')).toBe(0); // kept: its second request
    expect(await hit(store, 'a')).toBe(1); // forgotten: counted afresh (evicts c, the least recent)
    expect(await hit(store, 'c')).toBe(1);
  });

  it('counts a denied check as a use, so a busy key is not evicted', async () => {
    const store = new MemoryStore({ maxKeys: 2 });
    await hit(store, 'busy');
    await hit(store, 'busy'); // full
    await hit(store, 'other');
    const [denied] = await store.evaluate([check('busy')], T0); // denied, but a use
    expect(denied!.allowed).toBe(false);
    await hit(store, 'new'); // evicts other, not busy
    const [still] = await store.evaluate([check('busy')], T0);
    expect(still!.allowed).toBe(false);
  });

  it('drops an expired counter when read and reuses its slot', async () => {
    const store = new MemoryStore({ maxKeys: 3 });
    await hit(store, 'a');
    await hit(store, 'b');
    const later = T0 + 120_000;
    expect(await hit(store, 'a', later)).toBe(1);
    expect(store.size).toBe(2);
    await store.evaluate([check('c')], later); // fills the store without evicting b
    expect(store.size).toBe(3);
  });

  it('keeps rules apart even when tags are equal', async () => {
    const store = new MemoryStore();
    await hit(store, 'same', T0, 'one');
    expect(await hit(store, 'same', T0, 'two')).toBe(1);
    expect(await hit(store, 'same', T0, 'one')).toBe(0);
  });

  it('forgets everything on close and works again after', async () => {
    const store = new MemoryStore({ maxKeys: 5 });
    for (const tag of ['a', 'b', 'c']) await hit(store, tag);
    await store.close();
    expect(store.size).toBe(0);
    expect(await hit(store, 'a')).toBe(1);
  });

  it('behaves as a reference LRU map under random use', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 9 }), later: fc.boolean() }), { maxLength: 80 }),
        async (maxKeys, steps) => {
          const store = new MemoryStore({ maxKeys });
          // Reference: key -> {count, windowEnd}, Map order = recency.
          const model = new Map<number, { count: number; until: number }>();
          let now = T0;
          for (const { key, later } of steps) {
            if (later) now += 40_000;
            const [result] = await store.evaluate([check(`k${key}`)], now);
            let entry = model.get(key);
            model.delete(key);
            if (entry !== undefined && entry.until <= now) entry = undefined;
            const windowStart = Math.floor(now / WINDOW.windowMs) * WINDOW.windowMs;
            const count = entry && entry.until > now ? entry.count : 0;
            const allowed = count + 1 <= WINDOW.limit;
            expect(result!.allowed).toBe(allowed);
            if (allowed) entry = { count: count + 1, until: windowStart + WINDOW.windowMs };
            if (entry !== undefined) model.set(key, entry);
            while (model.size > maxKeys) model.delete(model.keys().next().value as number);
            expect(store.size).toBe(model.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

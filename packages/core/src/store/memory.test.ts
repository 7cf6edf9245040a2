import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Check, SlotHint } from './contract.js';
import { MemoryStore, SWEEP_PER_CALL } from './memory.js';
import { protectedLimit } from './segmentedLru.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const WINDOW = { limit: 2, windowMs: 60_000, burst: 2 };

function check(tag: string, rule = 'r'): Check {
  return { rule, tag, algorithm: 'fixed_window', params: WINDOW, cost: 1, mode: 'enforce' };
}

/** Remaining units of a counter after one more request (1 when the store forgot it, 0 when it is full). */
async function hit(store: MemoryStore, tag: string, now = T0, rule = 'r'): Promise<number> {
  const [result] = await store.evaluate([check(tag, rule)], now);
  return result!.remaining;
}

async function allowed(store: MemoryStore, tag: string, now = T0): Promise<boolean> {
  const [result] = await store.evaluate([check(tag)], now);
  return result!.allowed;
}

/** Uses `tag` until it is denied: a client locked out. */
async function lockOut(store: MemoryStore, tag: string): Promise<void> {
  while (await allowed(store, tag));
}

describe('MemoryStore eviction', () => {
  it('evicts the least recently used one-hit counter when full', async () => {
    const store = new MemoryStore({ maxKeys: 2 });
    await hit(store, 'a');
    await hit(store, 'b');
    await hit(store, 'c'); // evicts a
    expect(store.size).toBe(2);
    expect(await hit(store, 'b')).toBe(0); // kept: its second request
    expect(await hit(store, 'a')).toBe(1); // forgotten: counted afresh (evicts c, the one-hit key)
    expect(await hit(store, 'c')).toBe(1);
    expect(store.health().evictions).toBe(3);
  });

  it('keeps a denied counter through a flood of fresh keys far beyond maxKeys', async () => {
    const store = new MemoryStore({ maxKeys: 100 });
    await lockOut(store, 'attacker');
    for (let i = 0; i < 10_000; i++) await hit(store, `fresh-${i}`);
    expect(await allowed(store, 'attacker')).toBe(false);
    expect(store.health()).toEqual({
      connected: true,
      breaker: 'closed',
      pending: 0,
      keys: 100,
      evictions: 9_901,
    });
  });

  it('keeps counters used twice over one-hit keys, and a denied one while fewer than 80% of maxKeys are protected after it', async () => {
    const maxKeys = 10;
    const store = new MemoryStore({ maxKeys });
    await lockOut(store, 'attacker');
    // Others used twice since its last use: up to the protected segment's room less one, it stays.
    for (let i = 0; i < protectedLimit(maxKeys) - 1; i++) {
      await hit(store, `twice-${i}`);
      await hit(store, `twice-${i}`);
    }
    for (let i = 0; i < 1000; i++) await hit(store, `fresh-${i}`);
    expect(await allowed(store, 'attacker')).toBe(false);
    // The documented bound: once a protected segment's worth of keys were used twice after its last use,
    // it is back on probation and a flood evicts it.
    for (let i = 0; i < protectedLimit(maxKeys); i++) {
      await hit(store, `again-${i}`);
      await hit(store, `again-${i}`);
    }
    for (let i = 0; i < 1000; i++) await hit(store, `more-${i}`);
    expect(await allowed(store, 'attacker')).toBe(true);
  });

  it('writes a counter back right when a new counter earlier in the same call evicted its slot', async () => {
    const store = new MemoryStore({ maxKeys: 1 });
    await hit(store, 'x');
    // 'fresh' is written first and takes x's slot (the only one); x's count must follow x, not stay there.
    const results = await store.evaluate([check('fresh'), check('x')], T0);
    expect(results.map((result) => result.allowed)).toEqual([true, true]);
    expect(await allowed(store, 'x')).toBe(false); // x kept its two requests
    expect(store.size).toBe(1);
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

  it('behaves as a reference segmented LRU under random use', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: SWEEP_PER_CALL }),
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 9 }), later: fc.boolean() }), { maxLength: 80 }),
        async (maxKeys, steps) => {
          const store = new MemoryStore({ maxKeys });
          const model = new SegmentedModel(maxKeys);
          let now = T0;
          for (const { key, later } of steps) {
            if (later) now += 40_000;
            const [result] = await store.evaluate([check(`k${key}`)], now);
            expect(result!.allowed).toBe(model.hit(key, now));
            expect(store.size).toBe(model.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

/**
 * The reference: Maps in recency order (oldest first) for probation and protected. A store no bigger than
 * one sweep drops every expired counter at the start of each call, so the model does too.
 */
class SegmentedModel {
  readonly probation = new Map<number, { count: number; until: number }>();
  readonly protected = new Map<number, { count: number; until: number }>();
  constructor(readonly maxKeys: number) {}

  get size(): number {
    return this.probation.size + this.protected.size;
  }

  hit(key: number, now: number): boolean {
    for (const segment of [this.probation, this.protected]) {
      for (const [k, entry] of segment) if (entry.until <= now) segment.delete(k);
    }
    const entry = this.probation.get(key) ?? this.protected.get(key);
    if (entry !== undefined) this.use(key, entry);
    const windowStart = Math.floor(now / WINDOW.windowMs) * WINDOW.windowMs;
    const count = entry?.count ?? 0;
    if (count + 1 > WINDOW.limit) return false;
    const next = { count: count + 1, until: windowStart + WINDOW.windowMs };
    if (entry !== undefined) {
      this.protected.set(key, next);
      return true;
    }
    if (this.size >= this.maxKeys) {
      const victims = this.probation.size > 0 ? this.probation : this.protected;
      victims.delete(victims.keys().next().value as number);
    }
    this.probation.set(key, next);
    return true;
  }

  use(key: number, entry: { count: number; until: number }): void {
    const wasProbation = this.probation.delete(key);
    this.protected.delete(key);
    this.protected.set(key, entry);
    if (wasProbation && this.protected.size > protectedLimit(this.maxKeys)) {
      const [oldest, demoted] = this.protected.entries().next().value as [number, typeof entry];
      this.protected.delete(oldest);
      this.probation.set(oldest, demoted);
    }
  }
}

describe('MemoryStore expiry', () => {
  it('drops an expired counter when read and reuses its slot', async () => {
    const store = new MemoryStore({ maxKeys: 3 });
    await hit(store, 'a');
    await hit(store, 'b');
    const later = T0 + 120_000;
    expect(await hit(store, 'a', later)).toBe(1);
    await store.evaluate([check('c')], later);
    await store.evaluate([check('d')], later); // fills the store again without an eviction
    expect(store.size).toBe(3);
    expect(store.health().evictions).toBe(0);
  });

  it('sweeps expired counters a few slots per call, never all at once', async () => {
    const store = new MemoryStore({ maxKeys: 10_000 });
    const keys = 1000;
    for (let i = 0; i < keys; i++) await hit(store, `old-${i}`);
    const later = T0 + 120_000; // every counter expired, none read again
    let previous = store.size;
    let calls = 0;
    while (store.size > calls) {
      await hit(store, `new-${calls++}`, later); // each call adds one live counter
      const dropped = previous - store.size + 1;
      expect(dropped).toBeGreaterThan(0);
      expect(dropped).toBeLessThanOrEqual(SWEEP_PER_CALL);
      previous = store.size;
    }
    // Gone gradually, over at least keys / SWEEP_PER_CALL calls; only the live counters are left.
    expect(calls).toBeGreaterThanOrEqual(keys / SWEEP_PER_CALL);
    expect(store.size).toBe(calls);
    expect(store.health().evictions).toBe(0);
  });

  it('rests the sweep while no counter can have expired, and wakes it for the earliest expiry set since', async () => {
    const store = new MemoryStore({ maxKeys: 10_000 });
    const keys = 100;
    for (let i = 0; i < keys; i++) await hit(store, `k${i}`); // all expire at the end of T0's minute
    const passes = Math.ceil(keys / SWEEP_PER_CALL) + 1;
    for (let i = 0; i < passes; i++) await hit(store, 'k0', T0 + 1); // one full pass sees every expiry
    const rested = store.swept;
    for (let i = 0; i < 50; i++) await hit(store, 'k1', T0 + 2);
    expect(store.swept).toBe(rested); // nothing can have expired: no slot looked at
    // A counter expiring sooner (a one-second window), written while the sweep rests, wakes it in time.
    const soon: Check = { ...check('short', 'per_second'), params: { limit: 5, windowMs: 1000, burst: 5 } };
    await store.evaluate([soon], T0 + 2);
    expect(store.size).toBe(keys + 1);
    let calls = 0;
    while (store.size > keys && calls++ < passes) await hit(store, 'k1', T0 + 1000);
    expect(store.size).toBe(keys); // the short counter swept without being read again
    expect(store.swept).toBeGreaterThan(rested);
  });
});

describe('MemoryStore', () => {
  it('keeps rules apart even when tags are equal', async () => {
    const store = new MemoryStore();
    await hit(store, 'same', T0, 'one');
    expect(await hit(store, 'same', T0, 'two')).toBe(1);
    expect(await hit(store, 'same', T0, 'one')).toBe(0);
  });

  it('finds every counter among many (spread over many small maps)', async () => {
    const store = new MemoryStore({ maxKeys: 50_000 });
    for (let i = 0; i < 50_000; i++) store.evaluateNow([check(`k${i}`)], T0);
    for (let i = 0; i < 50_000; i += 7) expect(await hit(store, `k${i}`)).toBe(0);
    expect(store.health()).toMatchObject({ keys: 50_000, evictions: 0 });
  });

  it('forgets everything on close and works again after', async () => {
    const store = new MemoryStore({ maxKeys: 5 });
    for (const tag of ['a', 'b', 'c']) await hit(store, tag);
    await store.close();
    expect(store.size).toBe(0);
    expect(await hit(store, 'a')).toBe(1);
  });

  it('refuses a maxKeys that is not a positive integer', () => {
    for (const maxKeys of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryStore({ maxKeys })).toThrow(/maxKeys must be a positive integer/);
    }
  });
});

describe('MemoryStore slot hints', () => {
  /** Checks of several rules on one tag, each carrying the tag's one hint, as the engine's tag cache hands it. */
  const hinted = (tag: string, rules: readonly string[], hint: SlotHint): Check[] =>
    rules.map((rule) => ({ ...check(tag, rule), hint }));

  it('writes where it keeps a new tag into the hint, and finds the counter from it', () => {
    const store = new MemoryStore();
    const hint: SlotHint = { slot: -1 };
    store.evaluateNow(hinted('a', ['r'], hint), T0);
    expect(hint.slot).toBeGreaterThanOrEqual(0);
    const [second] = store.evaluateNow(hinted('a', ['r'], hint), T0);
    expect(second!.remaining).toBe(0);
  });

  it('counts right from a stale hint whose slot now holds another tag', () => {
    const store = new MemoryStore({ maxKeys: 1 });
    const hintA: SlotHint = { slot: -1 };
    store.evaluateNow(hinted('a', ['r'], hintA), T0);
    store.evaluateNow([check('b')], T0); // evicts a: its slot now holds b
    const [result] = store.evaluateNow(hinted('a', ['r'], hintA), T0);
    expect(result!.remaining).toBe(1); // a counted afresh, not as b's second request
    const [b] = store.evaluateNow([check('b')], T0);
    expect(b!.remaining).toBe(1); // b was the victim this time, and is counted afresh too
  });

  it('ignores a hint written by another store, and one past its slots', () => {
    const first = new MemoryStore();
    const second = new MemoryStore();
    const hint: SlotHint = { slot: -1 };
    for (let i = 0; i < 5; i++) first.evaluateNow([check(`x${i}`)], T0);
    first.evaluateNow(hinted('a', ['r'], hint), T0);
    expect(second.evaluateNow(hinted('a', ['r'], hint), T0)[0]!.remaining).toBe(1);
    expect(first.evaluateNow(hinted('a', ['r'], { slot: 1_000_000 }), T0)[0]!.remaining).toBe(0);
  });

  it('answers as a store without hints under random use of rules sharing tags', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.array(
          fc.record({
            tag: fc.integer({ min: 0, max: 5 }),
            rules: fc.subarray(['r1', 'r2', 'r3'], { minLength: 1 }),
            later: fc.boolean(),
          }),
          { maxLength: 60 },
        ),
        async (maxKeys, steps) => {
          const withHints = new MemoryStore({ maxKeys });
          const plain = new MemoryStore({ maxKeys });
          const hints = new Map<number, SlotHint>();
          let now = T0;
          for (const { tag, rules, later } of steps) {
            if (later) now += 40_000;
            if (!hints.has(tag)) hints.set(tag, { slot: -1 });
            const got = withHints.evaluateNow(hinted(`t${tag}`, rules, hints.get(tag)!), now);
            const expected = plain.evaluateNow(
              rules.map((rule) => check(`t${tag}`, rule)),
              now,
            );
            expect(got.map((r) => [r.allowed, r.remaining])).toEqual(
              expected.map((r) => [r.allowed, r.remaining]),
            );
            expect(withHints.size).toBe(plain.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

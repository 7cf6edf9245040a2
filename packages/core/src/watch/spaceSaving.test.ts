import { describe, expect, it } from 'vitest';
import { type BoardSketch, parseBoard } from './board.js';
import { mergeSketches } from './merge.js';
import { SpaceSaving } from './spaceSaving.js';

/** A seeded xorshift32 generator of numbers in [0, 1): the same stream on every run. */
function seeded(seed: number): () => number {
  let x = seed * 2654435761 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** `n` keys drawn from a Zipf law of exponent `s` over `universe` keys. */
function zipf(n: number, universe: number, s: number, random: () => number): string[] {
  const weights = Array.from({ length: universe }, (_, i) => 1 / (i + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) {
    sum += w / total;
    cumulative.push(sum);
  }
  return Array.from({ length: n }, () => {
    const u = random();
    let lo = 0;
    let hi = universe - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return `k${lo}`;
  });
}

function exactCounts(stream: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of stream) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

function sketchOf(stream: readonly string[], k: number): SpaceSaving {
  const sketch = new SpaceSaving(k);
  for (const key of stream) sketch.offer(key);
  return sketch;
}

describe('SpaceSaving', () => {
  it('counts exactly while there are no more keys than counters', () => {
    const sketch = sketchOf(['a', 'b', 'a', 'c', 'a', 'b'], 3);
    expect(sketch.entries()).toEqual([
      { tag: 'a', count: 3, error: 0 },
      { tag: 'b', count: 2, error: 0 },
      { tag: 'c', count: 1, error: 0 },
    ]);
    expect(sketch.floor).toBe(0);
    expect(sketch.total).toBe(6);
  });

  it('gives a new key the lowest counter, whose count becomes its error', () => {
    const sketch = sketchOf(['a', 'a', 'b', 'c'], 2);
    // c took b's counter (count 1): c is counted 2, of which 1 may be b's.
    expect(sketch.entries()).toEqual([
      { tag: 'a', count: 2, error: 0 },
      { tag: 'c', count: 2, error: 1 },
    ]);
    expect(sketch.floor).toBe(2);
  });

  for (const [seed, k, s] of [
    [1, 16, 1.1],
    [2, 32, 0.8],
    [3, 8, 1.5],
    [4, 64, 1.0],
  ] as const) {
    it(`keeps its bound on a Zipf stream (seed ${seed}, k ${k}, s ${s}): every count within N/k, every heavy key counted`, () => {
      const stream = zipf(20_000, 2_000, s, seeded(seed));
      const exact = exactCounts(stream);
      const sketch = sketchOf(stream, k);
      const entries = sketch.entries();
      const n = stream.length;
      expect(sketch.total).toBe(n);
      expect(entries).toHaveLength(k);
      // The counts add up to N exactly, and the floor is at most N/k.
      expect(entries.reduce((sum, e) => sum + e.count, 0)).toBe(n);
      expect(sketch.floor).toBeLessThanOrEqual(n / k);
      for (const e of entries) {
        const truth = exact.get(e.tag) ?? 0;
        expect(e.count).toBeGreaterThanOrEqual(truth);
        expect(e.count - e.error).toBeLessThanOrEqual(truth);
        expect(e.error).toBeLessThanOrEqual(sketch.floor);
      }
      const counted = new Set(entries.map((e) => e.tag));
      for (const [key, truth] of exact)
        if (!counted.has(key)) expect(truth).toBeLessThanOrEqual(sketch.floor);
      // Sorted, highest first.
      for (let i = 1; i < entries.length; i++)
        expect(entries[i - 1]!.count).toBeGreaterThanOrEqual(entries[i]!.count);
    });
  }

  it('starts afresh when cleared, and reuses its memory', () => {
    const sketch = sketchOf(zipf(5_000, 500, 1, seeded(9)), 8);
    sketch.clear();
    expect(sketch.total).toBe(0);
    expect(sketch.size).toBe(0);
    expect(sketch.entries()).toEqual([]);
    for (const key of ['x', 'y', 'x']) sketch.offer(key);
    expect(sketch.entries()).toEqual([
      { tag: 'x', count: 2, error: 0 },
      { tag: 'y', count: 1, error: 0 },
    ]);
  });
});

describe('mergeSketches', () => {
  const published = (sketch: SpaceSaving): BoardSketch => ({
    total: sketch.total,
    capacity: sketch.capacity,
    floor: sketch.floor,
    keys: sketch.entries().map((e) => [e.tag, e.count, e.error, 0] as const),
  });

  it('holds the merged bound over three gateways: each count within the sum of floors (<= N/k) of the truth', () => {
    const random = seeded(42);
    const streams = [0, 1, 2].map((i) => zipf(8_000 + i * 1_000, 1_500, 1.1, random));
    const k = 16;
    const merged = mergeSketches(
      streams.map((stream) => published(sketchOf(stream, k))),
      1_000,
    );
    const exact = exactCounts(streams.flat());
    const n = streams.flat().length;
    expect(merged.total).toBe(n);
    expect(merged.bound).toBeLessThanOrEqual(n / k);
    expect(merged.bound).toBeGreaterThan(0);
    for (const key of merged.keys) {
      const truth = exact.get(key.tag) ?? 0;
      expect(Math.abs(key.count - truth)).toBeLessThanOrEqual(merged.bound);
      expect(key.low).toBeLessThanOrEqual(truth);
      expect(key.high).toBeGreaterThanOrEqual(truth);
    }
    const listed = new Set(merged.keys.map((key) => key.tag));
    for (const [key, truth] of exact) if (truth > merged.bound) expect(listed.has(key)).toBe(true);
  });
});

describe('parseBoard', () => {
  it('reads a board and skips text of another format or shape', () => {
    const board = {
      format: 1,
      gateway: 'gw-1',
      domain: 'd',
      version: 'v',
      at: 2,
      since: 1,
      intervalMs: 1,
      store: {},
      rules: [],
    };
    expect(parseBoard(JSON.stringify(board))).toEqual(board);
    expect(parseBoard(JSON.stringify({ ...board, format: 2 }))).toBeUndefined();
    expect(parseBoard(JSON.stringify({ ...board, rules: [{ rule: 'r' }] }))).toBeUndefined();
    expect(parseBoard('not json')).toBeUndefined();
  });
});

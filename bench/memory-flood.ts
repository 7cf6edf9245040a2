/**
 * MemoryStore under floods. First, the worst single check with 1,000,000 keys: while filling, after the
 * window rolls over (every counter expired), and under fresh keys that evict; against one Map doing the
 * same inserts and deletions (the layout before), and against a loop that allocates nothing (the noise
 * floor of the measurement on this machine). Second, the cost of a new key through a limiter (tag cache
 * and store) once both are full, against the same limiter while they still have room; and the same for a
 * tag cache that evicts its oldest entry through the Map's iterator (the cache before).
 * Run: npx tsx bench/memory-flood.ts [keys]
 */
import { openSync, readSync } from 'node:fs';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { compileRules, createLimiter, hashText, type Limiter, MemoryStore } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RESULT_PREFIX } from './lib/micro.js';

const KEYS = Number(process.argv[2] ?? 1_000_000);
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const WINDOW_MS = 60_000;
const params = { limit: 600, windowMs: WINDOW_MS, burst: 600 };

/**
 * Milliseconds of CPU this thread has run: a check's time without the time the OS gave other processes
 * (on this shared machine it deschedules the bench for tens of ms at a time, which no check spent).
 * Wall time where /proc/thread-self/schedstat is missing.
 */
const threadMs: () => number = (() => {
  try {
    const fd = openSync('/proc/thread-self/schedstat', 'r');
    const buffer = Buffer.alloc(64);
    return () => {
      const length = readSync(fd, buffer, 0, 64, 0);
      const text = buffer.toString('latin1', 0, length);
      return Number(text.slice(0, text.indexOf(' '))) / 1e6;
    };
  } catch {
    return () => performance.now();
  }
})();

/** Major garbage collections seen, as [start, end] in performance.now() time. */
const majorGcs: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR)
      majorGcs.push([entry.startTime, entry.startTime + entry.duration]);
  }
}).observe({ entryTypes: ['gc'] });

/** The worst steps of a run, in ms: over all, and leaving out those a major GC overlapped. */
interface Worst {
  readonly all: number;
  readonly outsideMajorGc: number;
  /** Steps over 5 ms. */
  readonly over5: number;
}

/** Runs `step(i)` for i in [from, to), timing each. */
async function timeEach(from: number, to: number, step: (i: number) => void): Promise<Worst> {
  await settle();
  majorGcs.length = 0;
  const slow: [start: number, ms: number][] = [];
  for (let i = from; i < to; i++) {
    const cpu = threadMs();
    const start = performance.now();
    step(i);
    const ms = threadMs() - cpu;
    if (ms > 1) slow.push([start, ms]);
  }
  await settle(); // lets the observer deliver the last collections
  let all = 0;
  let outsideMajorGc = 0;
  for (const [start, ms] of slow) {
    all = Math.max(all, ms);
    if (!majorGcs.some(([a, b]) => a < start + ms + 1 && b > start - 1))
      outsideMajorGc = Math.max(outsideMajorGc, ms);
  }
  return { all, outsideMajorGc, over5: slow.filter(([, ms]) => ms > 5).length };
}

function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 100));
}

const tags = Array.from({ length: KEYS * 2 }, (_, i) => hashText(`key-${i}`));
const checkOf = (i: number): Check => ({
  rule: 'per_key',
  tag: tags[i]!,
  algorithm: 'sliding_window',
  params,
  cost: 1,
  mode: 'enforce',
});

/** The three phases on a MemoryStore of KEYS keys. */
async function storePhases(): Promise<Worst[]> {
  const store = new MemoryStore({ maxKeys: KEYS });
  const fill = await timeEach(0, KEYS, (i) => store.evaluateNow([checkOf(i)], T0));
  // Sliding window state lives two windows: after three, every counter has expired.
  const rolled = await timeEach(0, KEYS, (i) => store.evaluateNow([checkOf(i)], T0 + 3 * WINDOW_MS));
  const fresh = await timeEach(KEYS, 2 * KEYS, (i) => store.evaluateNow([checkOf(i)], T0 + 4 * WINDOW_MS));
  await store.close();
  return [fill, rolled, fresh];
}

/** Baseline: the same inserts and deletions on one Map from tag to a number, as the store had before. */
async function mapPhases(): Promise<Worst[]> {
  const map = new Map<string, number>();
  const fill = await timeEach(0, KEYS, (i) => map.set(tags[i]!, i));
  const rolled = await timeEach(0, KEYS, (i) => {
    map.delete(tags[i]!);
    map.set(tags[i]!, i);
  });
  const fresh = await timeEach(KEYS, 2 * KEYS, (i) => {
    map.delete(tags[i - KEYS]!);
    map.set(tags[i]!, i);
  });
  return [fill, rolled, fresh];
}

/** The noise floor: as many steps that allocate nothing and do a check's worth of arithmetic. */
function noiseFloor(): Promise<Worst> {
  const numbers = new Float64Array(1024);
  return timeEach(0, KEYS, (i) => {
    let sum = 0;
    for (let k = 0; k < 64; k++) sum += numbers[(i + k) & 1023]!;
    numbers[i & 1023] = sum; // kept, so that the loop is not optimised away
  });
}

const BATCH = 10_000;
const ROOMY_KEYS = 40_000; // below the tag cache's 50,000 and the store's maxKeys: nothing evicted yet

/** A limiter with one per-key rule, a MemoryStore of 200,000 keys and the default tag cache (50,000). */
function perKeyLimiter(): Limiter {
  const rules = compileRules({
    rules: [{ name: 'per_key', key: ['api_key'], limit: { requests: 10, per: '60s' } }],
  });
  return createLimiter({ rules, store: new MemoryStore({ maxKeys: 200_000 }), clock: () => T0 });
}

/** µs per key of `run` over BATCH fresh keys. */
function perKey(run: (key: string) => void, next: () => string): number {
  const keys = Array.from({ length: BATCH }, next);
  const start = performance.now();
  for (const key of keys) run(key);
  return ((performance.now() - start) * 1000) / BATCH;
}

/**
 * New-key cost once full over new-key cost with room, batch by batch, the two interleaved so that the
 * machine's drift hits both alike: `full` has seen FLOOD fresh keys first, `roomy` is remade every
 * ROOMY_KEYS keys. Returns the median µs per key of each and the median ratio.
 */
function churn<T>(make: () => T, add: (target: T, key: string) => void, flood: number) {
  let n = 0;
  const next = () => `fresh-${n++}`;
  const full = make();
  for (let i = 0; i < flood; i++) add(full, next());
  let roomy = make();
  let roomyKeys = 0;
  const roomyCosts: number[] = [];
  const fullCosts: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < 30; round++) {
    if (roomyKeys >= ROOMY_KEYS) {
      roomy = make();
      roomyKeys = 0;
    }
    const room = perKey((key) => add(roomy, key), next);
    roomyKeys += BATCH;
    const flooded = perKey((key) => add(full, key), next);
    roomyCosts.push(room);
    fullCosts.push(flooded);
    ratios.push(flooded / room);
  }
  return { roomy: median(roomyCosts), full: median(fullCosts), ratio: median(ratios) };
}

/** Baseline cache: a Map of at most 50,000 entries evicting its oldest through `keys().next()`. */
function iteratorCache(): Map<string, string> {
  return new Map();
}

function addToIteratorCache(cache: Map<string, string>, key: string): void {
  if (cache.size >= 50_000) cache.delete(cache.keys().next().value as string);
  cache.set(key, hashText(key));
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

const f = (ms: number) => ms.toFixed(1);
const show = (w: Worst) => `${f(w.outsideMajorGc)} (${f(w.all)} with major GC; ${w.over5} over 5 ms)`;
const noise = await noiseFloor();
const store = await storePhases();
const map = await mapPhases();
console.log(`worst single step, ${KEYS.toLocaleString('en')} keys, ms of this thread's CPU:`);
console.log(`  noise floor (a step allocating nothing): ${show(noise)}`);
const phases = ['filling', 'after the window rolled over (same keys)', 'fresh keys, store full and evicting'];
for (let p = 0; p < phases.length; p++) {
  console.log(`  ${phases[p]}: MemoryStore check ${show(store[p]!)}; one Map ${show(map[p]!)}`);
}
const sluice = churn(perKeyLimiter, (limiter, key) => void limiter.check({ api_key: key }), 1_000_000);
const baseline = churn(iteratorCache, addToIteratorCache, 200_000);
console.log(
  `new key through limiter.check after 1,000,000 fresh keys (tag cache and store full): ${sluice.full.toFixed(1)} µs, ` +
    `with room: ${sluice.roomy.toFixed(1)} µs (ratio ${sluice.ratio.toFixed(2)})`,
);
console.log(
  `baseline, a 50,000-entry Map evicting through its iterator, per new key: full ${baseline.full.toFixed(1)} µs, ` +
    `with room ${baseline.roomy.toFixed(1)} µs (ratio ${baseline.ratio.toFixed(2)})`,
);
console.log(
  `${RESULT_PREFIX}${JSON.stringify({
    worstCheckMs: Math.max(...store.map((w) => w.outsideMajorGc)),
    worstCheckWithMajorGcMs: Math.max(...store.map((w) => w.all)),
    worstMapMs: Math.max(...map.map((w) => w.outsideMajorGc)),
    noiseFloorMs: noise.all,
    newKeyUsFull: sluice.full,
    newKeyUsRoomy: sluice.roomy,
    newKeyRatio: sluice.ratio,
    iteratorEvictionRatio: baseline.ratio,
  })}`,
);

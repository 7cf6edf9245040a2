/**
 * MemoryStore: bytes per key and checks per second, each against a baseline measured in the same process.
 * Run: node --expose-gc --import tsx bench/memory-store.ts
 * With `--against=<git revision>`, also the common path (one sliding_window rule, a key seen before, allowed)
 * of this MemoryStore against the one at that revision, in interleaved rounds of CPU time.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileRules, createLimiter, hashText, MemoryStore } from '@sluice/core';
import type { Check } from '@sluice/core/store';
import { RESULT_PREFIX } from './lib/micro.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const window = { limit: 600, windowMs: 60_000, burst: 600 };

function heapAfterGc(): number {
  gc!();
  gc!();
  // Typed arrays keep their contents outside the JS heap: count them too.
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

function check(i: number): Check {
  return {
    rule: 'key_default',
    // A tag as the engine makes it (a 22-character hash), so that its string costs what it costs in use.
    tag: hashText(`key-${i}`),
    algorithm: 'sliding_window',
    params: window,
    cost: 1,
    mode: 'enforce',
  };
}

async function bytesPerKey(keys: number, maxKeys = keys): Promise<{ store: number; baseline: number }> {
  const before = heapAfterGc();
  const store = new MemoryStore({ maxKeys });
  for (let i = 0; i < keys; i++) await store.evaluate([check(i)], T0);
  const storeBytes = (heapAfterGc() - before) / keys;
  await store.close();
  // Baseline: the smallest thing that could count per key, a Map from the same tag strings to a number.
  const before2 = heapAfterGc();
  const map = new Map<string, number>();
  for (let i = 0; i < keys; i++) map.set(check(i).tag, 1);
  const baseline = (heapAfterGc() - before2) / map.size;
  return { store: storeBytes, baseline };
}

async function boundedUnderRotation(maxKeys: number, rotating: number) {
  const store = new MemoryStore({ maxKeys });
  const before = heapAfterGc();
  for (let i = 0; i < rotating; i++) await store.evaluate([check(i)], T0);
  const grown = heapAfterGc() - before;
  return { size: store.size, mb: grown / 2 ** 20 };
}

async function checksPerSecond(ms: number) {
  const rules = compileRules({
    rules: [
      { name: 'per_key', key: ['api_key'], limit: { requests: 1_000_000, per: '60s' } },
      { name: 'per_tenant', key: ['tenant'], limit: { requests: 1_000_000, per: '60s' } },
      { name: 'global', global: true, key: [], limit: { requests: 1_000_000_000, per: '60s' } },
    ],
  });
  const limiter = createLimiter({ rules, clock: () => T0 });
  const descriptors = Array.from({ length: 10_000 }, (_, i) => ({
    api_key: `key-${i}`,
    tenant: `t${i % 50}`,
  }));
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) await limiter.check(descriptors[n++ % descriptors.length]!);
  }
  const sluice = n / (ms / 1000);
  // Baseline: the same loop awaiting a resolved promise per request (the floor of any async limiter).
  let m = 0;
  const end2 = performance.now() + ms;
  while (performance.now() < end2) {
    for (let i = 0; i < 1000; i++) await Promise.resolve(descriptors[m++ % descriptors.length]);
  }
  return { sluice, baseline: m / (ms / 1000) };
}

/**
 * The MemoryStore class of another revision, imported from a checkout of its core source (in a temporary git
 * worktree, removed when the process exits): core's folders moved in issue 23, so a file copied beside today's
 * would not find its imports. It runs with that revision's algorithms, as that revision did.
 */
async function storeAt(revision: string): Promise<typeof MemoryStore> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-memory-store-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, revision], { stdio: 'ignore' });
  process.on('exit', () => execFileSync('git', ['worktree', 'remove', '--force', dir], { stdio: 'ignore' }));
  symlinkSync(join(import.meta.dirname, '../node_modules'), join(dir, 'node_modules'), 'dir');
  const src = join(dir, 'packages/core/src');
  const file = ['store/memory.ts', 'stores/memory.ts'].map((f) => join(src, f)).find((f) => existsSync(f));
  if (file === undefined) throw new Error(`${revision} has no MemoryStore source`);
  return ((await import(pathToFileURL(file).href)) as { MemoryStore: typeof MemoryStore }).MemoryStore;
}

/** Calls per CPU-second of each store on the common path, rounds interleaved (order rotated), and the ratio. */
function commonPath(stores: Record<string, MemoryStore>, rounds: number, calls: number) {
  const params = { limit: 1_000_000_000, windowMs: 60_000, burst: 1_000_000_000 };
  const keys = Array.from({ length: 10_000 }, (_, i) => [{ ...check(i), params }]);
  // One loop per store, each with its own inline caches, as in a process with one store.
  const loops = Object.keys(stores).map(
    () =>
      new Function(
        'keys',
        `return (store, n, t) => { for (let i = 0; i < n; i++) store.evaluateNow(keys[i % keys.length], t + (i >> 10)); };`,
      )(keys) as (store: MemoryStore, n: number, t: number) => void,
  );
  const entries = Object.entries(stores);
  for (const [, store] of entries) for (const call of keys) store.evaluateNow(call, T0);
  const rates: Record<string, number[]> = {};
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const at = (k + round) % entries.length;
      const [name, store] = entries[at]!;
      const start = process.cpuUsage();
      loops[at]!(store, calls, T0 + 1000 + round);
      const used = process.cpuUsage(start);
      if (round === 0) continue; // warms up
      rates[name] ??= [];
      rates[name].push(calls / ((used.user + used.system) / 1e6));
    }
  }
  return rates;
}

const against = process.argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
if (against === undefined) await figures();
else {
  const Old = await storeAt(against);
  const rates = commonPath({ before: new Old(), now: new MemoryStore() }, 15, 300_000);
  const ratios = rates.now!.map((rate, i) => rate / rates.before![i]!).sort((a, b) => a - b);
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1]!;
  console.log(
    `common path, calls per CPU-second: now ${Math.round(median(rates.now!)).toLocaleString('en')}, ${against} ${Math.round(median(rates.before!)).toLocaleString('en')}; ratio per round median ${median(ratios).toFixed(2)} (${ratios[0]!.toFixed(2)}-${ratios.at(-1)!.toFixed(2)})`,
  );
}

/** Bytes per key, the bound under rotation and checks per second of a three-rule limiter. */
async function figures(): Promise<void> {
  const bytes = await bytesPerKey(200_000);
  console.log(
    `bytes per sliding_window key, store full (maxKeys 200,000): ${bytes.store.toFixed(0)} (baseline Map<tag, number>: ${bytes.baseline.toFixed(0)}, ratio ${(bytes.store / bytes.baseline).toFixed(2)})`,
  );
  const roomy = await bytesPerKey(200_000, 1_000_000);
  console.log(
    `bytes per sliding_window key, default maxKeys 1,000,000 (slot pages made as needed): ${roomy.store.toFixed(0)}`,
  );
  const bounded = await boundedUnderRotation(100_000, 1_000_000);
  console.log(
    `1,000,000 rotating keys, maxKeys 100,000: ${bounded.size} keys kept, heap grew ${bounded.mb.toFixed(1)} MB`,
  );
  const speed = await checksPerSecond(3000);
  console.log(
    `limiter.check, 3 rules, 10,000 keys: ${Math.round(speed.sluice).toLocaleString('en')} checks/s (baseline await loop ${Math.round(speed.baseline).toLocaleString('en')}/s)`,
  );
  console.log(
    `${RESULT_PREFIX}${JSON.stringify({ bytesPerKey: bytes.store, bytesPerKeyRoomy: roomy.store, baselineBytes: bytes.baseline, rotatingKept: bounded.size, rotatingMb: bounded.mb, checksPerSecond: speed.sluice })}`,
  );
}

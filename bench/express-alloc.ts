/**
 * Bytes the serving process allocates per request on Express (issue 46), counted, not timed: the Express apps
 * of bench/server.ts for `express <limiter> rotating` (one rule per API key, 10,000 rotating keys, MemoryStore)
 * with no limiter, Sluice and express-rate-limit, each served by a child process of its own from the compiled
 * bench (bench/dist, packages' dist, as run.ts serves them) and driven from this process over loopback HTTP.
 *
 * Each child serves a warm-up first (every key seen, the code optimized), then windows of N requests: after a
 * full GC, the heap's used bytes before and after a window whose young generation is large enough that no
 * collection runs in it (a window in which one does is refused), so the growth is what the window allocated.
 * Then two windows under V8's sampling heap profiler (one allocation sampled per `--interval` bytes): one
 * counting every sampled allocation, one only those still alive after the full GC that ends a sampling (what a
 * request leaves behind until the key's next request: the garbage that survives young collections and is
 * promoted, which the old generation's collector then pays for). Each by the allocating function, and by the
 * nearest Sluice function on the stack. The profiler's own messages (node:inspector) are left out.
 *
 *   npx tsx bench/express-alloc.ts [--no-build] [--requests=2000] [--warmup=20000] [--windows=3] [--top=15]
 *     [--only=none,sluice-memory,peer-memory] [--connections=32] [--interval=128] [--promoted=4000]
 *     [--child-flags=--a,--b]
 */
import { fork } from 'node:child_process';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { buildForBench } from './lib/build.js';
import { nextMessage } from './lib/children.js';
import { type LimiterKind, ROTATING_KEYS, type ServerSpec } from './lib/spec.js';

const CONTENDERS = ['none', 'sluice-memory', 'peer-memory'] as const satisfies readonly LimiterKind[];
type Contender = (typeof CONTENDERS)[number];
const TITLE: Record<Contender, string> = {
  none: 'Express alone',
  'sluice-memory': 'Sluice (MemoryStore)',
  'peer-memory': 'express-rate-limit (memory)',
};

/** What a window reports: heap growth in it, and how many collections ran (0, or the figure is void). */
interface WindowResult {
  readonly bytes: number;
  readonly bySpace: Record<string, number>;
  readonly gcs: number;
  /** Of which not young-generation ones (mark-compact, incremental marking, weak callbacks). */
  readonly majors: number;
}

/** One allocation site of a sampled window: bytes per request. */
interface Site {
  readonly site: string;
  readonly bytes: number;
}

interface ProfileResult {
  readonly sampledBytes: number;
  /** By the function that allocated. */
  readonly self: readonly Site[];
  /** By the nearest Sluice function on the stack (itself, or what it called outside Sluice). */
  readonly sluice: readonly Site[];
  readonly sluiceBytes: number;
}

// ---------------------------------------------------------------------------------------------- the child

const gcNow = (globalThis as { gc?: () => void }).gc;

/** Heap bytes in use by space (code space apart: compiled code is not per-request garbage). */
function heapBySpace(): Record<string, number> {
  const spaces: Record<string, number> = {};
  for (const space of getHeapSpaceStatistics()) spaces[space.space_name] = space.space_used_size;
  return spaces;
}

/** Long enough for the GC observer to have heard of every collection so far. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

async function serve(limiter: Contender): Promise<void> {
  if (!gcNow) throw new Error('the child runs with --expose-gc');
  const dist = new URL('./dist/apps/', import.meta.url);
  const { expressApp } = (await import(
    new URL('express.js', dist).href
  )) as typeof import('./apps/express.js');
  const { Tally } = (await import(new URL('common.js', dist).href)) as typeof import('./apps/common.js');
  const spec: ServerSpec = { framework: 'express', limiter, rules: 'one', redisPort: 0, prefix: 'alloc' };
  const server = createServer(expressApp(spec, new Tally()));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  let gcs = 0;
  let majors = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcs += 1;
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MINOR) majors += 1;
    }
  }).observe({ entryTypes: ['gc'] });
  const session = new Session();
  session.connect();
  let before: Record<string, number> = {};
  let gcsBefore = 0;
  let majorsBefore = 0;

  process.on(
    'message',
    async (message: { type: string; interval?: number; requests?: number; collected?: boolean }) => {
      if (message.type === 'start') {
        gcNow();
        gcNow();
        // The observer hears of collections a few milliseconds late: of those two, before the window opens.
        await settle();
        gcsBefore = gcs;
        majorsBefore = majors;
        before = heapBySpace();
        process.send?.({ type: 'started' });
      } else if (message.type === 'stop') {
        const after = heapBySpace();
        await settle();
        const bySpace: Record<string, number> = {};
        let bytes = 0;
        for (const name in after) {
          const grown = (after[name] ?? 0) - (before[name] ?? 0);
          bySpace[name] = grown;
          if (name !== 'code_space') bytes += grown;
        }
        const result: WindowResult = { bytes, bySpace, gcs: gcs - gcsBefore, majors: majors - majorsBefore };
        process.send?.({ type: 'window', result });
      } else if (message.type === 'profile-start') {
        gcNow();
        gcNow();
        await session.post('HeapProfiler.enable');
        // With the collected objects included, the profile has every sampled allocation; without them, only
        // those still alive after the full GC stopSampling runs: what a request leaves behind (a counter's state).
        const all = message.collected === true;
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: message.interval ?? 128,
          includeObjectsCollectedByMajorGC: all,
          includeObjectsCollectedByMinorGC: all,
        });
        process.send?.({ type: 'started' });
      } else if (message.type === 'profile-stop') {
        const { profile } = await session.post('HeapProfiler.stopSampling');
        await settle();
        process.send?.({
          type: 'profile',
          result: summarize(profile as unknown as Profile, message.requests ?? 1),
        });
      }
    },
  );
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
}

/** A node of a sampling heap profile (Node's typings leave out `id` and `samples`). */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children: readonly ProfileNode[];
}

interface Profile {
  readonly head: ProfileNode;
  readonly samples: readonly { readonly size: number; readonly nodeId: number }[];
}

/** Sluice's compiled code, as the bench serves it. */
const isSluice = (url: string): boolean => /\/packages\/[a-z]+\/dist\//.test(url);

function siteOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url === '' ? '(native)' : url.replace(/^.*\/(packages|node_modules)\//, '');
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

function summarize(profile: Profile, requests: number): ProfileResult {
  const self = new Map<string, number>();
  const sluice = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, bytes: number) =>
    map.set(key, (map.get(key) ?? 0) + bytes);
  // Sampled bytes by node id, from the samples (each stands for `size` bytes of its kind).
  const sampled = new Map<number, number>();
  for (const sample of profile.samples)
    sampled.set(sample.nodeId, (sampled.get(sample.nodeId) ?? 0) + sample.size);
  let total = 0;
  let sluiceBytes = 0;
  const walk = (node: ProfileNode, nearest: string | undefined): void => {
    // The profiler's own messages.
    if (node.callFrame.url === 'node:inspector') return;
    const site = siteOf(node);
    // What a package's code allocates is its own, even when Sluice called it (the route after `next()`).
    const { url } = node.callFrame;
    const ours = isSluice(url) ? site : url.includes('/node_modules/') ? undefined : nearest;
    const bytes = sampled.get(node.id) ?? 0;
    if (bytes > 0) {
      total += bytes;
      add(self, site, bytes);
      if (ours !== undefined) {
        sluiceBytes += bytes;
        add(sluice, ours, bytes);
      }
    }
    for (const child of node.children) walk(child, ours);
  };
  walk(profile.head, undefined);
  const top = (map: Map<string, number>): Site[] =>
    [...map].map(([site, bytes]) => ({ site, bytes: bytes / requests })).sort((a, b) => b.bytes - a.bytes);
  return {
    sampledBytes: total / requests,
    self: top(self),
    sluice: top(sluice),
    sluiceBytes: sluiceBytes / requests,
  };
}

// --------------------------------------------------------------------------------------------- the parent

/** `--name=value` options. */
function option(name: string, fallback: string): string {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : given.slice(name.length + 3);
}

let sequence = 0;

/** Sends `count` requests over the agent's keep-alive connections, each with the next rotating key. */
async function drive(agent: Agent, port: number, count: number, connections: number): Promise<void> {
  let left = count;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const headers = { 'x-api-key': `key-${sequence++ % ROTATING_KEYS}` };
      const req = httpRequest({ host: '127.0.0.1', port, path: '/', agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.resume();
        res.once('end', resolve);
      });
      req.once('error', reject);
      req.end();
    });
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left -= 1;
      await one();
    }
  };
  await Promise.all(Array.from({ length: Math.min(connections, count) }, worker));
}

interface Settings {
  readonly requests: number;
  readonly warmup: number;
  readonly windows: number;
  /** Requests of a window on the default young generation, in which scavenges run. */
  readonly promoted: number;
  readonly connections: number;
  readonly interval: number;
  readonly top: number;
  /**
   * More node flags for the servers: `--no-turbo-inlining` puts each allocation under the function that makes
   * it (the profiler names an optimized frame, not what was inlined into it), at the cost of the allocations
   * escape analysis removes once functions are inlined (then heap growth is above what a server allocates).
   */
  readonly childFlags: readonly string[];
}

interface Measured {
  readonly contender: Contender;
  readonly windows: readonly WindowResult[];
  /** Every sampled allocation. */
  readonly allocated: ProfileResult;
  /** Sampled allocations still alive at the window's end. */
  readonly alive: ProfileResult;
  /** Windows of `promoted` requests on the default young generation. */
  readonly promotion: readonly WindowResult[];
}

/** A server child and the connections to it. */
interface Served {
  /** Sends `count` requests. */
  run(count: number): Promise<void>;
  /** Sends a message and waits for the child's reply of type `reply`. */
  ask<T>(message: object, reply: string): Promise<T>;
  stop(): void;
}

/** Starts a server child with extra node flags and serves it the warm-up. */
async function served(contender: Contender, settings: Settings, flags: readonly string[]): Promise<Served> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--expose-gc', ...flags, ...settings.childFlags, '--import', 'tsx'],
    // The compiled packages (as bench/server.ts serves them), not their sources through the root `paths`.
    env: { ...process.env, ALLOC_CHILD: contender, TSX_TSCONFIG_PATH: 'bench/tsconfig.build.json' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // One set of connections for the child's life: a window opens none.
  const agent = new Agent({ keepAlive: true, maxSockets: settings.connections });
  const stop = () => {
    agent.destroy();
    child.kill('SIGKILL');
  };
  try {
    const port = await nextMessage(child, (m) => (m as { type?: string; port?: number }).port);
    const run = (count: number) => drive(agent, port, count, settings.connections);
    await run(settings.warmup);
    const ask = <T>(message: object, reply: string): Promise<T> => {
      const answer = nextMessage(child, (m) => {
        const { type, result } = m as { type?: string; result?: T };
        return type === reply ? (result ?? (true as T)) : undefined;
      });
      child.send(message);
      return answer;
    };
    return { run, ask, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** Windows of `count` requests, each after a full GC. */
async function windows(server: Served, count: number, times: number): Promise<WindowResult[]> {
  const results: WindowResult[] = [];
  for (let i = 0; i < times; i++) {
    await server.ask({ type: 'start' }, 'started');
    await server.run(count);
    results.push(await server.ask<WindowResult>({ type: 'stop' }, 'window'));
  }
  return results;
}

async function measure(contender: Contender, settings: Settings): Promise<Measured> {
  // A young generation large enough that a window runs no collection (each semi-space 128 MB).
  const large = await served(contender, settings, ['--max-semi-space-size=128', '--min-semi-space-size=128']);
  try {
    const allocation = await windows(large, settings.requests, settings.windows);
    const profiled = async (collected: boolean): Promise<ProfileResult> => {
      await large.ask({ type: 'profile-start', interval: settings.interval, collected }, 'started');
      await large.run(settings.requests);
      return large.ask<ProfileResult>({ type: 'profile-stop', requests: settings.requests }, 'profile');
    };
    const allocated = await profiled(true);
    const alive = await profiled(false);
    large.stop();
    // The default young generation, as servers run: what the scavenges promote to the old one.
    const usual = await served(contender, settings, []);
    try {
      const promotion = await windows(usual, settings.promoted, settings.windows);
      return { contender, windows: allocation, allocated, alive, promotion };
    } finally {
      usual.stop();
    }
  } finally {
    large.stop();
  }
}

const bytes = (value: number): string => value.toFixed(0);

/** Growth of the spaces scavenges promote into. */
const oldGrowth = (w: WindowResult): number =>
  (w.bySpace.old_space ?? 0) + (w.bySpace.large_object_space ?? 0) + (w.bySpace.map_space ?? 0);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function printSites(title: string, sites: readonly Site[], top: number): void {
  console.log(`\n${title}\n`);
  for (const { site, bytes: each } of sites.slice(0, top))
    console.log(`  ${bytes(each).padStart(6)}  ${site}`);
}

async function main(): Promise<void> {
  const settings: Settings = {
    requests: Number(option('requests', '2000')),
    warmup: Number(option('warmup', String(2 * ROTATING_KEYS))),
    windows: Number(option('windows', '3')),
    promoted: Number(option('promoted', '4000')),
    connections: Number(option('connections', '32')),
    interval: Number(option('interval', '128')),
    top: Number(option('top', '15')),
    childFlags: option('child-flags', '')
      .split(',')
      .filter((flag) => flag !== ''),
  };
  const only = option('only', CONTENDERS.join(',')).split(',') as Contender[];
  if (!process.argv.includes('--no-build')) buildForBench();
  const results: Measured[] = [];
  for (const contender of only) results.push(await measure(contender, settings));
  // A window in which a collection ran measures nothing: left out (and shown as void).
  const perRequest = (r: Measured): number =>
    median(r.windows.filter((w) => w.gcs === 0).map((w) => w.bytes / settings.requests));
  const alone = results.find((r) => r.contender === 'none');
  console.log(
    `\nBytes the serving process allocates per request (${settings.requests} requests a window, ` +
      `${settings.connections} connections, after ${settings.warmup} warm-up requests; code space left out)\n`,
  );
  console.log(
    '| server | heap growth per window | median | over Express alone | of which old space | sampled: allocated / still alive |',
  );
  console.log('|---|---|---|---|---|---|');
  // Old-space growth in a window without collections: what is allocated there directly (maps and descriptor
  // arrays of objects that gain properties, pretenured sites), garbage only a full GC takes back.
  const oldPerRequest = (r: Measured): number =>
    median(r.windows.filter((w) => w.gcs === 0).map((w) => oldGrowth(w) / settings.requests));
  for (const r of results) {
    const windows = r.windows
      .map((w) => (w.gcs > 0 ? `void (${w.gcs} GC)` : bytes(w.bytes / settings.requests)))
      .join(', ');
    const over = alone === undefined || r === alone ? '' : `+${bytes(perRequest(r) - perRequest(alone))}`;
    const sampled = `${bytes(r.allocated.sampledBytes)} / ${bytes(r.alive.sampledBytes)}`;
    const old = bytes(oldPerRequest(r));
    console.log(
      `| ${TITLE[r.contender]} | ${windows} | ${bytes(perRequest(r))} | ${over} | ${old} | ${sampled} |`,
    );
  }
  console.log(
    `\nPromoted to the old generation per request, the default young generation (${settings.promoted} ` +
      'requests a window after a full GC: growth of the old spaces in windows with scavenges only)\n',
  );
  console.log(
    '| server | old-space growth per window, bytes/request (scavenges) | median | over Express alone |',
  );
  console.log('|---|---|---|---|');
  const promoted = (w: WindowResult): number => oldGrowth(w) / settings.promoted;
  const medianPromoted = (r: Measured): number =>
    median(r.promotion.filter((w) => w.majors === 0).map(promoted));
  for (const r of results) {
    const each = r.promotion
      .map((w) => (w.majors > 0 ? `void (${w.majors} major)` : `${bytes(promoted(w))} (${w.gcs})`))
      .join(', ');
    const over =
      alone === undefined || r === alone ? '' : `+${bytes(medianPromoted(r) - medianPromoted(alone))}`;
    console.log(`| ${TITLE[r.contender]} | ${each} | ${bytes(medianPromoted(r))} | ${over} |`);
  }
  const sluice = results.find((r) => r.contender === 'sluice-memory');
  if (sluice !== undefined) {
    if (sluice.allocated.sluiceBytes === 0)
      console.log('\nNo sample in packages/*/dist: Sluice ran from source?');
    const { allocated, alive } = sluice;
    printSites(
      `Sluice, allocated, by the nearest Sluice function on the stack (${bytes(allocated.sluiceBytes)} bytes/request):`,
      allocated.sluice,
      settings.top,
    );
    printSites(
      `Sluice, still alive at the window's end, the same way (${bytes(alive.sluiceBytes)} bytes/request):`,
      alive.sluice,
      settings.top,
    );
  }
  if (alone !== undefined)
    for (const r of results) {
      if (r === alone) continue;
      const base = new Map(alone.allocated.self.map(({ site, bytes: each }) => [site, each]));
      const diff = new Map<string, number>();
      for (const { site, bytes: each } of r.allocated.self) diff.set(site, each - (base.get(site) ?? 0));
      for (const [site, each] of base) if (!diff.has(site)) diff.set(site, -each);
      const sites = [...diff].map(([site, each]) => ({ site, bytes: each }));
      sites.sort((a, b) => b.bytes - a.bytes);
      printSites(
        `${TITLE[r.contender]} minus Express alone, allocated, by function (most added):`,
        sites,
        settings.top,
      );
      printSites(`${TITLE[r.contender]} minus Express alone (most saved):`, sites.slice(-5).reverse(), 5);
    }
  for (const r of results) {
    printSites(
      `${TITLE[r.contender]}, allocated, by function (bytes/request):`,
      r.allocated.self,
      settings.top,
    );
    printSites(`${TITLE[r.contender]}, still alive, by function:`, r.alive.self, settings.top);
  }
}

const childOf = process.env.ALLOC_CHILD as Contender | undefined;
if (childOf !== undefined) await serve(childOf);
else await main();

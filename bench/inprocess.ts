/**
 * In-process figures for each algorithm: checks per CPU-second through the engine on a MemoryStore
 * (`limiter.decide`, one rule keyed by API key, 10,000 keys) and CPU µs per request through the adapter flow
 * (`createHttpLimiter` with a Node IncomingMessage and ServerResponse, no socket: facts, check, RateLimit
 * headers set), in rounds of CPU time.
 *
 *   npx tsx bench/inprocess.ts [--rounds=5] [--ms=250]            the working tree
 *   npx tsx bench/inprocess.ts --against=<rev> [--now=HEAD]        two revisions side by side
 *   ... --algorithms=concurrency,gcra                               only these
 *
 * Each revision (`.` is the working tree) runs in its own process, from a clean checkout in a temporary git
 * worktree (removed at the end), importing core's TypeScript source under tsx, so both pay tsx alike. Rounds
 * are interleaved (one round of every revision, the order rotated each round) and each figure is reported
 * as the median (min-max) over rounds, with the per-round ratio: on a shared machine a drift of 10-25% over
 * a minute is common, so only figures of the same round compare.
 *
 * The clock is virtual: it advances 1 ms per 10 requests, so each of the 10,000 keys sees one request per
 * second; limits (1,000 per 60 s; quota 1,000,000 a day; concurrency 1,000 leases of 1 s, left to expire)
 * keep every request allowed, so each algorithm's common path is measured, not its denial.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { forkRoundWorker, median, perCpuSecond, type RoundWorker } from './lib/cpu-rounds.js';

const REPO = resolve(import.meta.dirname, '..');
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const KEYS = 10_000;

/** What the bench uses of `@sluice/core`, stable across the revisions it compares. */
interface CoreModule {
  compileRules(spec: unknown): unknown;
  createLimiter(options: { rules: unknown; clock: () => number }): {
    decide(d: Record<string, string>): unknown;
  };
  readonly algorithms?: Readonly<Record<string, unknown>>;
  descriptorOf?(name: string): { readonly limit: string; readonly calendar: boolean };
}

/** What the bench uses of `@sluice/core/store`, where the algorithm registry is read since issue 23. */
interface StoreModule {
  readonly ALGORITHM_NAMES: readonly string[];
  descriptorOf(name: string): { readonly limit: string; readonly calendar: boolean };
}

/** What the bench uses of core's HTTP layer. */
interface HttpModule {
  createHttpLimiter(options: unknown): { check(req: IncomingMessage, facts: NodeFacts): unknown };
}

/** A verdict as far as the bench reads it. */
interface VerdictLike {
  readonly action: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One revision's figures for one round, by algorithm. */
type RoundFigures = Record<string, { readonly checksPerSecond: number; readonly usPerRequest: number }>;

/** The limit a rule of this algorithm writes: every request of the bench stays allowed. */
function limitFor(core: CoreModule, name: string): Record<string, unknown> {
  const descriptor = core.descriptorOf?.(name);
  if ((descriptor?.limit ?? (name === 'concurrency' ? 'concurrent' : 'requests')) === 'concurrent')
    return { concurrent: 1000, lease: '1s' };
  if (descriptor?.calendar ?? name === 'quota') return { requests: 1_000_000, per: 'day' };
  return { requests: 1000, per: '60s' };
}

function ruleFor(core: CoreModule, name: string) {
  return { name: `per_key_${name}`, key: ['api_key'], algorithm: name, limit: limitFor(core, name) };
}

/** The facts an adapter reads off a Node request (as the Express adapter's class does). */
class NodeFacts {
  readonly ip = '127.0.0.1';
  readonly method: string;
  readonly url: string;
  readonly #req: IncomingMessage;
  constructor(req: IncomingMessage) {
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
    this.#req = req;
  }
  header(name: string): string | readonly string[] | undefined {
    return this.#req.headers[name];
  }
}

/** One process measuring one revision's source, driven round by round by the parent. */
async function worker(root: string): Promise<void> {
  const src = join(root, 'packages/core/src');
  let core = (await import(pathToFileURL(join(src, 'index.ts')).href)) as CoreModule;
  const http = (await import(pathToFileURL(join(src, 'http/index.ts')).href)) as HttpModule;
  // Since issue 23 the algorithm registry is read through @sluice/core/store (store.ts), no longer the root.
  const store = existsSync(join(src, 'store.ts'))
    ? ((await import(pathToFileURL(join(src, 'store.ts')).href)) as StoreModule)
    : undefined;
  if (store !== undefined) core = { ...core, descriptorOf: store.descriptorOf };
  const only = process.argv.find((a) => a.startsWith('--algorithms='))?.slice('--algorithms='.length);
  const names = (store?.ALGORITHM_NAMES ?? Object.keys(core.algorithms ?? {})).filter(
    (name) => only === undefined || only.split(',').includes(name),
  );
  let now = T0;
  const clock = () => now;
  const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  const descriptors = keys.map((api_key) => ({ api_key }));
  const silent = { warn() {}, info() {}, error() {} };
  // A fresh request per check, as a server gets (the flow remembers the requests it has seen); one response per key.
  const socket = new Socket();
  const request = (i: number) => {
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = '/items';
    req.headers = { 'x-api-key': keys[i % KEYS]!, host: 'bench' };
    return req;
  };
  const responses = keys.map(() => new ServerResponse(request(0)));
  const engines = names.map((name) =>
    core.createLimiter({ rules: core.compileRules({ rules: [ruleFor(core, name)] }), clock }),
  );
  const flows = names.map((name) =>
    http.createHttpLimiter({ rules: { rules: [ruleFor(core, name)] }, clock, logger: silent }),
  );
  let tick = 0;
  const round = (ms: number): RoundFigures => {
    const figures: RoundFigures = {};
    names.forEach((name, n) => {
      const engine = engines[n]!;
      const flow = flows[n]!;
      const checks = perCpuSecond(
        ms,
        (i) => {
          now = T0 + Math.floor(i / 10);
          engine.decide(descriptors[i % KEYS]!);
        },
        tick,
      );
      tick = checks.next;
      const requestsRun = perCpuSecond(
        ms,
        (i) => {
          now = T0 + Math.floor(i / 10);
          const req = request(i);
          const verdict = flow.check(req, new NodeFacts(req)) as VerdictLike;
          if (verdict instanceof Promise) throw new Error(`${name}: the flow awaited something`);
          if (verdict.action !== 'allow')
            throw new Error(`${name}: request ${i} not allowed (${verdict.action})`);
          const res = responses[i % KEYS]!;
          for (const header in verdict.headers) res.setHeader(header, verdict.headers[header]!);
        },
        tick,
      );
      tick = requestsRun.next;
      // The same loop without the limiter: what the Node objects cost, taken off to give the flow's own.
      const bare = perCpuSecond(
        ms / 2,
        (i) => {
          const req = request(i);
          const facts = new NodeFacts(req);
          responses[i % KEYS]!.setHeader('x-bench', facts.method);
        },
        0,
      );
      figures[name] = {
        checksPerSecond: checks.rate,
        usPerRequest: 1e6 / requestsRun.rate - 1e6 / bare.rate,
      };
    });
    return figures;
  };
  process.on('message', (message: { ms: number }) => process.send!(round(message.ms)));
  process.send!({ ready: names });
}

/** A clean checkout of `revision` in a temporary worktree, sharing this checkout's node_modules. */
function checkout(revision: string): { root: string; remove(): void } {
  if (revision === '.') return { root: REPO, remove() {} };
  const sha = execFileSync('git', ['rev-parse', '--verify', `${revision}^{commit}`], {
    cwd: REPO,
    encoding: 'utf8',
  }).trim();
  const root = join(mkdtempSync(join(tmpdir(), 'sluice-inprocess-')), sha.slice(0, 10));
  execFileSync('git', ['worktree', 'add', '--detach', '--quiet', root, sha], { cwd: REPO });
  for (const dir of ['node_modules', 'packages/core/node_modules']) {
    if (existsSync(join(REPO, dir))) symlinkSync(join(REPO, dir), join(root, dir), 'dir');
  }
  return {
    root,
    remove() {
      execFileSync('git', ['worktree', 'remove', '--force', root], { cwd: REPO });
      rmSync(resolve(root, '..'), { recursive: true, force: true });
    },
  };
}

/** A worker process on one revision: ask it for a round, get its figures. */
interface Runner extends RoundWorker<RoundFigures> {
  readonly label: string;
  readonly names: readonly string[];
}

async function runner(label: string, root: string, only: string | undefined): Promise<Runner> {
  const args = [`--worker=${root}`, ...(only === undefined ? [] : [`--algorithms=${only}`])];
  const worker = await forkRoundWorker<RoundFigures>(label, import.meta.filename, args);
  return { ...worker, label, names: (worker.ready as { ready: string[] }).ready };
}

const range = (list: readonly number[], digits: number) =>
  `${median(list).toFixed(digits)} (${Math.min(...list).toFixed(digits)}-${Math.max(...list).toFixed(digits)})`;
const thousands = (list: readonly number[]) =>
  `${Math.round(median(list) / 1000)}k (${Math.round(Math.min(...list) / 1000)}-${Math.round(Math.max(...list) / 1000)}k)`;

async function main(): Promise<void> {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const rounds = Number(arg('rounds') ?? 5);
  const ms = Number(arg('ms') ?? 250);
  const against = arg('against');
  const revisions = against === undefined ? [arg('now') ?? '.'] : [arg('now') ?? 'HEAD', against];
  const checkouts = revisions.map(checkout);
  const runners: Runner[] = [];
  try {
    for (const [i, revision] of revisions.entries())
      runners.push(await runner(revision, checkouts[i]!.root, arg('algorithms')));
    const names = runners[0]!.names.filter((name) => runners.every((r) => r.names.includes(name)));
    const figures = runners.map(() => [] as RoundFigures[]);
    for (const r of runners) await r.round(ms); // warm-up, not counted
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < runners.length; k++) {
        const at = (k + round) % runners.length;
        figures[at]!.push(await runners[at]!.round(ms));
      }
    }
    report(names, revisions, figures);
  } finally {
    for (const r of runners) r.stop();
    for (const c of checkouts) c.remove();
  }
}

/** One line per algorithm: each revision's figures, and the per-round ratio of the first to the second. */
function report(
  names: readonly string[],
  revisions: readonly string[],
  figures: readonly RoundFigures[][],
): void {
  console.log(
    `in-process figures per algorithm, median (min-max) over ${figures[0]!.length} rounds of CPU time; ` +
      'checks/s: limiter.decide on a MemoryStore; µs: CPU per request through createHttpLimiter (Node request, no socket)',
  );
  const columns = revisions.flatMap((rev) => [`${rev} checks/s`, `${rev} µs/request`]);
  const ratios = revisions.length === 2 ? ['checks/s ratio', 'µs ratio'] : [];
  console.log(`| algorithm | ${[...columns, ...ratios].join(' | ')} |`);
  console.log(`|---|${[...columns, ...ratios].map(() => '---|').join('')}`);
  for (const name of names) {
    const cells = figures.flatMap((rounds) => [
      thousands(rounds.map((f) => f[name]!.checksPerSecond)),
      range(
        rounds.map((f) => f[name]!.usPerRequest),
        2,
      ),
    ]);
    if (figures.length === 2) {
      const [now, before] = figures as [RoundFigures[], RoundFigures[]];
      const perRound = (read: (f: RoundFigures) => number) => now.map((f, i) => read(f) / read(before[i]!));
      cells.push(
        range(
          perRound((f) => f[name]!.checksPerSecond),
          2,
        ),
      );
      cells.push(
        range(
          perRound((f) => f[name]!.usPerRequest),
          2,
        ),
      );
    }
    console.log(`| ${name} | ${cells.join(' | ')} |`);
  }
}

const workerRoot = process.argv.find((a) => a.startsWith('--worker='))?.slice('--worker='.length);
if (workerRoot === undefined) await main();
else await worker(workerRoot);

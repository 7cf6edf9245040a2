/**
 * User-space CPU a limiter adds per request on Fastify, in one process, with no sockets:
 * `npx tsx bench/inject-cost.ts [--revs=before:<rev>,after:<rev>] [--rounds=15] [--requests=20000] [--touch=KB]`.
 *
 * The served benchmarks (run.ts, added-cost.ts) resolve a limiter's cost only to a few microseconds: the kernel's
 * socket work and the wake-ups of two processes move with throughput. Here each contender is the bench's own
 * Fastify app (apps/fastify.ts), driven by `app.inject` with the rotating keys of the `rotating` scenario, in
 * slices interleaved round by round (each round in a rotated order) against the same app with no limiter;
 * the figure is user CPU per request added over it, median (min–max) over rounds. `--touch=KB`
 * walks that much other memory between requests, as a server's own work evicts the limiter's data from the
 * CPU caches. Each revision is a built copy of the tree (lib/revision.ts), imported into this one process.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildRevision, revisionsFrom } from './lib/revision.js';
import { ROTATING_KEYS, type ServerSpec } from './lib/spec.js';
import { rotate, showSpread, spread } from './lib/stats.js';

interface InjectApp {
  ready(): Promise<unknown>;
  inject(request: {
    method: 'GET';
    url: string;
    headers: Record<string, string>;
  }): Promise<{ statusCode: number }>;
  close(): Promise<unknown>;
}
type AppModule = { fastifyApp(spec: ServerSpec, tally: unknown): Promise<InjectApp> };
type CommonModule = { Tally: new () => { decisions: number } };

interface Contender {
  readonly name: string;
  readonly app: InjectApp;
  readonly tally?: { decisions: number };
  readonly micros: number[];
}

const value = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
const rounds = Number(value('rounds') ?? 15);
const requests = Number(value('requests') ?? 20_000);
const touchBytes = Number(value('touch') ?? 0) * 1024;
const revisions = revisionsFrom(value('revs'));

const spec = (limiter: ServerSpec['limiter'], rules: ServerSpec['rules']): ServerSpec => ({
  framework: 'fastify',
  limiter,
  rules,
  redisPort: 0,
  prefix: 'inject',
});

async function contenderOf(dir: string, name: string, s: ServerSpec): Promise<Contender> {
  const apps = (await import(pathToFileURL(join(dir, 'bench/dist/apps/fastify.js')).href)) as AppModule;
  const common = (await import(pathToFileURL(join(dir, 'bench/dist/apps/common.js')).href)) as CommonModule;
  const tally = new common.Tally();
  const app = await apps.fastifyApp(s, tally);
  await app.ready();
  return { name, app, tally, micros: [] };
}

const dirs = revisions.map((revision) => ({ name: revision.name, dir: buildRevision(revision.rev) }));
const first = dirs[0]!.dir;
const contenders: Contender[] = [
  await contenderOf(first, 'none', spec('none', 'one')),
  await contenderOf(first, '@fastify/rate-limit', spec('peer-memory', 'one')),
];
for (const { name, dir } of dirs) {
  contenders.push(await contenderOf(dir, `sluice ${name}, one rule`, spec('sluice-memory', 'one')));
  contenders.push(await contenderOf(dir, `sluice ${name}, user-style`, spec('sluice-memory', 'user')));
}

const keys = Array.from({ length: ROTATING_KEYS }, (_, n) => ({ 'x-api-key': `key-${n}` }));
const other = new Float64Array(Math.max(1, touchBytes / 8));
let sink = 0;

/** Walks `other` a cache line at a time. */
function touch(): void {
  for (let i = 0; i < other.length; i += 8) sink += other[i]!;
}

async function slice(contender: Contender, n: number): Promise<number> {
  const before = process.cpuUsage().user;
  for (let i = 0; i < n; i++) {
    const reply = await contender.app.inject({ method: 'GET', url: '/', headers: keys[i % keys.length]! });
    if (reply.statusCode !== 200) throw new Error(`${contender.name}: status ${reply.statusCode}`);
    if (touchBytes > 0) touch();
    // inject settles in microtasks: let the loop run the immediates it leaves (each holds a request).
    if (i % 64 === 63) await new Promise(setImmediate);
  }
  return (process.cpuUsage().user - before) / n;
}

for (const contender of contenders) await slice(contender, requests); // warm-up: every key seen, code optimised
for (let round = 0; round < rounds; round++) {
  for (const contender of rotate(contenders, round)) contender.micros.push(await slice(contender, requests));
}

const baseline = contenders[0]!;
console.log(
  `Fastify inject, ${requests} requests per slice, ${rounds} rounds, touch ${touchBytes / 1024} KB (sink ${sink > 0 ? 1 : 0})`,
);
console.log(`none: ${showSpread(spread(baseline.micros))} µs user CPU per request`);
for (const contender of contenders.slice(1)) {
  const added = contender.micros.map((micros, round) => micros - baseline.micros[round]!);
  const decided = contender.tally?.decisions ?? 0;
  console.log(`${contender.name}: +${showSpread(spread(added))} µs (decisions ${decided})`);
}
for (const contender of contenders) await contender.app.close();

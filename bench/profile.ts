/**
 * Profiles one bench server under load: `npx tsx bench/profile.ts <framework> <limiter> <scenario> [seconds]
 * [--no-build]`, e.g. `npx tsx bench/profile.ts fastify sluice-memory three`. Builds (see lib/build.ts), starts
 * the compiled server (pinned like the suite), warms it up with autocannon, then profiles it (V8's profiler,
 * started and stopped over IPC, so the warm-up stays out) for `seconds` of load, and prints the limiter's own
 * code per request (see {@link ownMicros}), the whole process's busy and garbage-collection time per request
 * (see {@link processMicros}), and the files and functions with the most self time.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildForBench } from './lib/build.js';
import { startLoad } from './lib/children.js';
import { startBenchRedis } from './lib/redis.js';
import { CONTENDERS, type Framework, type LimiterKind, type Scenario } from './lib/spec.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The files of each limiter's own code. */
const OWN_CODE: Record<string, RegExp> = {
  sluice: /packages\/(core|fastify|express|koa|redis)\/dist\//,
  fastify: /@fastify\/rate-limit|toad-cache/,
  express: /express-rate-limit|rate-limit-redis/,
  koa: /koa-ratelimit/,
  rlflex: /rate-limiter-flexible/,
};

/** Frames where the framework goes on to the route: a middleware's `next()` runs the rest under it. */
const DOWNSTREAM =
  /fastify\/lib\/(hooks|handle-request|wrap-thenable|route)\.js|router\/lib\/(layer|route)\.js|express\/lib\/router|koa-compose|bench\/dist\/apps/;

/**
 * µs per request of the samples whose stack reaches the limiter's own code before a frame that goes on to the
 * route: its own functions and what they call (header writes, hashing, its promise continuations).
 */
function ownMicros(profile: Profile, own: RegExp, requests: number): number {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let micros = 0;
  profile.samples.forEach((sample, i) => {
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const url = byId.get(id)?.callFrame.url ?? '';
      if (own.test(url)) micros += profile.timeDeltas[i + 1] ?? 0;
      if (own.test(url) || DOWNSTREAM.test(url)) break;
    }
  });
  return micros / requests;
}

/**
 * The whole process per request: µs not idle (the profiler's own included, alike for every contender) and the
 * share of them in the garbage collector, which the own-code figure leaves out.
 */
function processMicros(profile: Profile, requests: number): { busy: number; collecting: number } {
  const nameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
  let busy = 0;
  let collecting = 0;
  profile.samples.forEach((sample, i) => {
    const name = nameOf.get(sample);
    const delta = profile.timeDeltas[i + 1] ?? 0;
    if (name !== '(idle)') busy += delta;
    if (name === '(garbage collector)') collecting += delta;
  });
  return { busy: busy / requests, collecting: collecting / requests };
}

const [framework = 'fastify', limiter = 'sluice-memory', scenario = 'three', seconds = '6'] =
  process.argv.slice(2);
if (!(framework in CONTENDERS)) throw new Error(`unknown framework ${framework}`);
if (!process.argv.includes('--no-build')) buildForBench();
const redis = await startBenchRedis();
const load = startLoad();
const dir = await mkdtemp(join(tmpdir(), 'sluice-prof-'));
const spec = {
  framework: framework as Framework,
  limiter: limiter as LimiterKind,
  rules: scenario === 'three' || scenario === 'user' ? scenario : 'one',
  redisPort: redis.server.port,
  prefix: 'prof',
};
const script = fileURLToPath(new URL('dist/server.js', import.meta.url));
const child = spawn('taskset', ['-c', '0', process.execPath, script], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  env: { ...process.env, BENCH_SPEC: JSON.stringify(spec) },
});
const port = await new Promise<number>((resolve) =>
  child.once('message', (m) => resolve((m as { port: number }).port)),
);
const url = `http://127.0.0.1:${port}/`;
/** Sends the server a message and waits for its answer of type `answer`. */
const ask = (message: unknown, answer: string) =>
  new Promise<Record<string, unknown>>((resolve) => {
    const listen = (m: unknown) => {
      const reply = m as { type?: string };
      if (reply.type !== answer) return;
      child.off('message', listen);
      resolve(reply as Record<string, unknown>);
    };
    child.on('message', listen);
    child.send(message as never);
  });
const served = async () => ((await ask('stats', 'stats')).stats as { requests: number }).requests;
// The warm-up (every key's first request, the code's optimisation) stays out of the profile.
await load.run({ url, scenario: scenario as Scenario, connections: 32, durationS: 2 });
await ask('profile-start', 'profiling');
const before = await served();
const result = await load.run({
  url,
  scenario: scenario as Scenario,
  connections: 32,
  durationS: Number(seconds),
});
console.log(`${framework} ${limiter} ${scenario}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`);
const requests = (await served()) - before;
const file = join(dir, 'served.cpuprofile');
await ask({ profileTo: file }, 'profiled');
console.log(`requests profiled: ${requests}`);
await new Promise<void>((resolve) => {
  child.once('exit', () => resolve());
  child.kill('SIGINT');
});
await load.stop();
await redis.stop();

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const { busy, collecting } = processMicros(profile, requests);
console.log(
  `the process: ${busy.toFixed(2)} µs busy per request, ${collecting.toFixed(2)} of them collecting garbage`,
);
const ownKey = limiter.startsWith('sluice') ? 'sluice' : limiter === 'rlflex-redis' ? 'rlflex' : framework;
const ownCode = OWN_CODE[ownKey]!;
console.log(
  `the limiter's own code: ${ownMicros(profile, ownCode, requests).toFixed(2)} µs per request (${ownCode.source})`,
);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<string, number>();
for (const id of profile.samples) {
  const frame = byId.get(id)?.callFrame;
  if (!frame) continue;
  const where = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|packages)\//, '')}:${frame.lineNumber + 1}`;
  self.set(where, (self.get(where) ?? 0) + 1);
}
const total = profile.samples.length;
const byFile = new Map<string, number>();
for (const id of profile.samples) {
  const url = byId.get(id)?.callFrame.url ?? '';
  const file =
    url.replace(/^.*\/(node_modules|packages)\//, '').replace(/\/(built|lib|dist)\/.*$/, '') || '(native)';
  byFile.set(file, (byFile.get(file) ?? 0) + 1);
}
console.log('self time by file:');
for (const [file, count] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${file}`);
}
console.log('self time by function:');
console.log(`profile: ${file}`);
for (const [where, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${where}`);
}

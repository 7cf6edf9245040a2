/**
 * Profiles one bench server under load: `npx tsx bench/profile.ts <framework> <limiter> <scenario> [seconds]
 * [--no-build]`, e.g. `npx tsx bench/profile.ts fastify sluice-memory three`. Builds (see lib/build.ts), starts
 * the compiled server (pinned like the suite), warms it up with autocannon, then profiles it (V8's profiler,
 * started and stopped over IPC, so the warm-up stays out) for `seconds` of load, and prints the limiter's own
 * code per request (see {@link ownMicros}), the whole process's busy and garbage-collection time per request
 * (see {@link processMicros}), and the files and functions with the most self time.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildForBench } from './lib/build.js';
import { startLoad, startServer } from './lib/children.js';
import { type CpuProfile, ownCodeOf, ownMicros, processMicros } from './lib/ownCode.js';
import { startBenchRedis } from './lib/redis.js';
import { CONTENDERS, type Framework, type LimiterKind, type Scenario, type ServerSpec } from './lib/spec.js';

const [framework = 'fastify', limiter = 'sluice-memory', scenario = 'three', seconds = '6'] =
  process.argv.slice(2);
if (!(framework in CONTENDERS)) throw new Error(`unknown framework ${framework}`);
if (!process.argv.includes('--no-build')) buildForBench();
const redis = await startBenchRedis();
const load = startLoad();
const dir = await mkdtemp(join(tmpdir(), 'sluice-prof-'));
const spec: ServerSpec = {
  framework: framework as Framework,
  limiter: limiter as LimiterKind,
  rules: scenario === 'three' || scenario === 'user' ? scenario : 'one',
  redisPort: redis.server.port,
  prefix: 'prof',
};
const server = await startServer(spec);
const job = { url: server.url, scenario: scenario as Scenario, connections: 32 };
// The warm-up (every key's first request, the code's optimisation) stays out of the profile.
await load.run({ ...job, durationS: 2 });
const file = join(dir, 'served.cpuprofile');
const before = (await server.stats()).requests;
const result = await server.profiled(() => load.run({ ...job, durationS: Number(seconds) }), file);
const requests = (await server.stats()).requests - before;
console.log(`${framework} ${limiter} ${scenario}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`);
console.log(`requests profiled: ${requests}`);
await server.stop();
await load.stop();
await redis.stop();

const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const { busy, collecting } = processMicros(profile, requests);
console.log(
  `the process: ${busy.toFixed(2)} µs busy per request, ${collecting.toFixed(2)} of them collecting garbage`,
);
const ownCode = ownCodeOf(framework as Framework, limiter as LimiterKind);
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

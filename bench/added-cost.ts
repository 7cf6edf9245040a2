/**
 * Server CPU a limiter adds per request, against the framework alone, in one run:
 * `npx tsx bench/added-cost.ts [--framework=fastify|express|koa] [--store=memory|redis]
 * [--revs=before:<rev>,after:<rev>] [--rounds=5] [--duration=3] [--rate=N] [--profile]`.
 *
 * Each revision is extracted (`git archive`, no worktree) into a temporary directory beside its own build, so
 * two versions of Sluice run side by side, interleaved round by round, against the same framework-alone baseline
 * and the framework's usual peer. Without `--revs` it measures HEAD alone. On memory (the default) the user-style
 * rules file and the minimal one rule are both measured (see README, Scenarios); `--store=redis` measures the
 * three-rule set on a private redis-server instead, against the peers stacking three limiters (on Express,
 * rate-limiter-flexible too). `--profile` runs every server under `node --cpu-prof` and
 * prints, per request, the self time of Node's own stream and HTTP machinery (nextTick, writev, teardown) next
 * to the baseline's, so that a difference there can be told from sampling noise.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchServer, startLoad, startServer } from './lib/children.js';
import { type BenchRedis, startBenchRedis } from './lib/redis.js';
import { buildRevision, ROOT, revisionsFrom } from './lib/revision.js';
import {
  CONTENDERS,
  contenderName,
  type Framework,
  type LimiterKind,
  type RuleSet,
  type Scenario,
} from './lib/spec.js';

/** Command-line settings. */
interface Settings {
  readonly framework: Framework;
  readonly store: 'memory' | 'redis';
  readonly revs: readonly { readonly name: string; readonly rev: string }[];
  readonly rounds: number;
  readonly durationS: number;
  readonly profile: boolean;
  /** Requests per second for every contender (`--rate=N`): at a pace all share, the kernel batches alike. */
  readonly rate: number | undefined;
}

function settingsFrom(argv: readonly string[]): Settings {
  const value = (name: string) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
  const framework = value('framework') ?? 'fastify';
  if (!(framework in CONTENDERS))
    throw new Error(`--framework takes fastify, express or koa, got ${framework}`);
  const store = value('store') ?? 'memory';
  if (store !== 'memory' && store !== 'redis') throw new Error(`--store takes memory or redis, got ${store}`);
  return {
    framework: framework as Framework,
    store,
    revs: revisionsFrom(value('revs')),
    rounds: Number(value('rounds') ?? 5),
    durationS: Number(value('duration') ?? 3),
    profile: argv.includes('--profile'),
    rate: value('rate') === undefined ? undefined : Number(value('rate')),
  };
}

/** One server measured: what it runs, from which build. */
interface Contender {
  readonly label: string;
  readonly limiter: LimiterKind;
  readonly rules: RuleSet;
  readonly scenario: Scenario;
  readonly script: string;
  server?: BenchServer;
  profileDir?: string;
  /** Server CPU µs per request, one per round. */
  readonly micros: number[];
  /** Of which in user space (JavaScript, without the kernel's socket work), one per round. */
  readonly userMicros: number[];
  /** redis-server CPU µs per request (`--store=redis`: it serves only the contender being loaded), one per round. */
  readonly redisMicros: number[];
  readonly rps: number[];
  requests: number;
}

function contendersOf(builds: readonly { name: string; dir: string }[], options: Settings): Contender[] {
  const { framework } = options;
  const script = (dir: string) => join(dir, 'bench/dist/server.js');
  const first = builds[0]?.dir ?? ROOT;
  const make = (label: string, limiter: LimiterKind, rules: RuleSet, scenario: Scenario, dir: string) => ({
    label,
    limiter,
    rules,
    scenario,
    script: script(dir),
    micros: [],
    userMicros: [],
    redisMicros: [],
    rps: [],
    requests: 0,
  });
  if (options.store === 'redis') {
    // The peers that stack three Redis limiters on this framework (rate-limiter-flexible where the bench has it).
    const peers = CONTENDERS[framework].filter((kind) => kind === 'peer-redis' || kind === 'rlflex-redis');
    return [
      make(`${framework} alone`, 'none', 'three', 'three', first),
      ...peers.map((kind) => make(contenderName(framework, kind), kind, 'three', 'three', first)),
      ...builds.map(({ name, dir }) =>
        make(`sluice ${name}, Redis, three rules`, 'sluice-redis', 'three', 'three', dir),
      ),
    ];
  }
  return [
    make(`${framework} alone`, 'none', 'one', 'rotating', first),
    make(contenderName(framework, 'peer-memory'), 'peer-memory', 'one', 'rotating', first),
    ...builds.flatMap(({ name, dir }) => [
      make(`sluice ${name}, user-style`, 'sluice-memory', 'user', 'user', dir),
      make(`sluice ${name}, minimal`, 'sluice-memory', 'one', 'rotating', dir),
    ]),
  ];
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

const settings = settingsFrom(process.argv.slice(2));
const builds = settings.revs.map(({ name, rev }) => ({ name, dir: buildRevision(rev) }));
const contenders = contendersOf(builds, settings);
const redis: BenchRedis | undefined = settings.store === 'redis' ? await startBenchRedis() : undefined;
const load = startLoad();
for (const [index, contender] of contenders.entries()) {
  const profileDir = settings.profile ? mkdtempSync(join(tmpdir(), 'sluice-prof-')) : undefined;
  const flags = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  contender.server = await startServer(
    {
      framework: settings.framework,
      limiter: contender.limiter,
      rules: contender.rules,
      redisPort: redis?.server.port ?? 0,
      prefix: `c${index}`,
    },
    contender.script,
    flags,
  );
  if (profileDir !== undefined) contender.profileDir = profileDir;
  // Warm-up: the JIT settles before anything is measured.
  await load.run({ url: contender.server.url, scenario: contender.scenario, connections: 32, durationS: 2 });
}

for (let round = 0; round < settings.rounds; round++) {
  // Each round starts with another contender: the machine drifts over minutes.
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as Contender);
  for (const contender of order) {
    const server = contender.server as BenchServer;
    const before = await server.stats();
    const redisBefore = await redis?.cpuMicros();
    const result = await load.run({
      url: server.url,
      scenario: contender.scenario,
      connections: 32,
      durationS: settings.durationS,
      ...(settings.rate === undefined ? {} : { rate: settings.rate }),
    });
    const after = await server.stats();
    const redisAfter = await redis?.cpuMicros();
    const served = Math.max(1, after.requests - before.requests);
    contender.micros.push((after.cpuMicros - before.cpuMicros) / served);
    contender.userMicros.push((after.userMicros - before.userMicros) / served);
    if (redisBefore !== undefined && redisAfter !== undefined)
      contender.redisMicros.push((redisAfter - redisBefore) / served);
    contender.rps.push(result.rps);
    contender.requests += served;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
for (const contender of contenders) await contender.server?.stop();
await load.stop();
await redis?.stop();

const baseline = contenders[0] as Contender;
console.log(
  `\n${settings.framework}, ${settings.store === 'redis' ? 'Redis, three rules' : 'MemoryStore'}, server CPU per request (${settings.rounds} rounds of ${settings.durationS} s${settings.rate === undefined ? '' : `, ${settings.rate} req/s for each`})`,
);
console.log(
  '| contender | server µs/req | added µs/req | of which user space: µs/req, added | Redis µs/req | req/s ratio |',
);
console.log('|---|---|---|---|---|---|');
for (const contender of contenders) {
  const added = contender.micros.map((micros, round) => micros - (baseline.micros[round] ?? 0));
  const addedUser = contender.userMicros.map((micros, round) => micros - (baseline.userMicros[round] ?? 0));
  const ratio = contender.rps.map((rps, round) => rps / (baseline.rps[round] ?? rps));
  // A revision whose servers do not report a figure (user space, before it was added) shows '–'.
  const range = (values: number[], digits: number) => {
    const known = values.filter(Number.isFinite);
    if (known.length === 0) return '–';
    return `${median(known).toFixed(digits)} (${Math.min(...known).toFixed(digits)}–${Math.max(...known).toFixed(digits)})`;
  };
  const redisCell =
    settings.store === 'redis' && contender !== baseline ? range(contender.redisMicros, 1) : '';
  console.log(
    `| ${contender.label} | ${range(contender.micros, 1)} | ${contender === baseline ? '' : range(added, 1)} | ${range(contender.userMicros, 1)}${contender === baseline ? '' : `, ${range(addedUser, 1)}`} | ${redisCell} | ${range(ratio, 2)} |`,
  );
}
if (settings.profile) printProfiles(contenders);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/** Self time per request of Node's stream, net and HTTP internals, by function, for each contender. */
function printProfiles(measured: readonly Contender[]): void {
  const perRequest = measured.map((contender) => {
    const dir = contender.profileDir as string;
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (file === undefined) return new Map<string, number>();
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      nodes: ProfileNode[];
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map<string, number>();
    // Warm-up requests are in the profile too: count them in.
    const requests = contender.requests * (1 + 2 / (settings.rounds * settings.durationS));
    profile.samples.forEach((id, index) => {
      const frame = byId.get(id)?.callFrame;
      if (
        frame === undefined ||
        !/^node:(internal\/)?(streams|net|_http|http|internal\/process\/task_queues|stream)/.test(frame.url)
      )
        return;
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^node:/, '')}`;
      self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0) / requests);
    });
    return self;
  });
  const names = new Set(perRequest.flatMap((self) => [...self.keys()]));
  const top = [...names]
    .map((name) => ({ name, most: Math.max(...perRequest.map((self) => self.get(name) ?? 0)) }))
    .sort((a, b) => b.most - a.most)
    .slice(0, 25);
  console.log(`\nSelf time per request in Node's stream/net/http internals, µs (--cpu-prof)`);
  console.log(`| function | ${measured.map((c) => c.label).join(' | ')} |`);
  console.log(`|---|${measured.map(() => '---').join('|')}|`);
  const total = perRequest.map((self) => [...self.values()].reduce((sum, v) => sum + v, 0));
  console.log(`| **all of them** | ${total.map((v) => v.toFixed(2)).join(' | ')} |`);
  for (const { name } of top)
    console.log(`| ${name} | ${perRequest.map((self) => (self.get(name) ?? 0).toFixed(2)).join(' | ')} |`);
}

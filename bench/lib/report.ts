/** Summaries, target checks and the result files (bench/results/latest.md and latest.json). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { MicroResults } from './micro.js';
import type { Settings } from './plan.js';
import type { BenchRedis } from './redis.js';
import {
  CONTENDERS,
  contenderName,
  type Framework,
  type LimiterKind,
  type LoadResult,
  SCENARIOS,
  type Scenario,
} from './spec.js';
import { type Spread, showSpread, spread } from './stats.js';

/** One measured run. */
export interface Measurement extends LoadResult {
  readonly framework: Framework;
  readonly limiter: LimiterKind;
  readonly scenario: Scenario;
  /** `max`: as fast as the server answers; `half`: a fixed rate, half of Sluice-on-Redis's maximum. */
  readonly load: 'max' | 'half';
  readonly round: number;
  /** Commands the server sent to Redis per request (round trips; a script call is one). */
  readonly redisPerRequest: number;
  /** Commands Redis ran per request (INFO commandstats), including those run inside scripts. */
  readonly redisExecutedPerRequest: number;
  /** redis-server CPU time per request, µs (INFO cpu). */
  readonly redisCpuPerRequest: number;
  /** The load generator's CPU time per request, µs: with Redis's, what CPU 1 spends per request. */
  readonly loadCpuPerRequest: number;
  readonly decisions: number;
  readonly failedOpen: number;
  readonly denied: number;
  readonly storeErrors: number;
  /** Server CPU time per request, µs: what the server spends, whether or not the load generator keeps up. */
  readonly cpuPerRequest: number;
  /** Share of the run's wall time the server process was on a CPU (1 = saturated). */
  readonly busy: number;
}

/** The machine a run was made on. */
export interface Machine {
  readonly nproc: number;
  readonly cpu: string;
  readonly node: string;
  readonly redis: string;
  readonly os: string;
  readonly commit: string;
  readonly date: string;
  readonly summary: string;
}

/** Describes this machine and the bench's redis-server. */
export async function describeMachine(redis: BenchRedis): Promise<Machine> {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown';
  const nproc = os.availableParallelism();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout: leave it unknown.
  }
  const machine = {
    nproc,
    cpu,
    node: process.version,
    redis: await redis.version(),
    os: `${os.type()} ${os.release()}`,
    commit,
    date: new Date().toISOString(),
  };
  return {
    ...machine,
    summary: `${nproc} CPUs (${cpu}), Node.js ${machine.node}, redis-server ${machine.redis}, ${machine.os}`,
  };
}

/** One contender in one scenario, over its rounds. */
export interface Summary {
  readonly framework: Framework;
  readonly scenario: Scenario;
  readonly load: 'max' | 'half';
  readonly limiter: LimiterKind;
  readonly name: string;
  readonly rps: Spread;
  /** Per round: this contender's throughput over its framework's no-limiter baseline in the same round. */
  readonly ratio: Spread;
  readonly p50: Spread;
  readonly p99: Spread;
  readonly redisPerRequest: Spread;
  readonly redisExecutedPerRequest: Spread;
  readonly redisCpuPerRequest: Spread;
  /** Load generator plus redis-server CPU per request (both on CPU 1). */
  readonly cpu1PerRequest: Spread;
  readonly cpuPerRequest: Spread;
  /** Per round: the baseline's server CPU per request over this contender's (capacity at saturation). */
  readonly cpuRatio: Spread;
  readonly busy: Spread;
  readonly failedOpen: number;
  readonly rejectedOrErrors: number;
  readonly rounds: number;
}

function perRoundRatio(
  runs: readonly Measurement[],
  baseline: readonly Measurement[],
  ratio: (run: Measurement, base: Measurement) => number,
): number[] {
  return runs.flatMap((run) => {
    const base = baseline.find((b) => b.round === run.round);
    return base ? [ratio(run, base)].filter(Number.isFinite) : [];
  });
}

/** Summaries of every contender, in framework, scenario and contender order. */
export function summarize(measurements: readonly Measurement[]): Summary[] {
  const summaries: Summary[] = [];
  for (const framework of Object.keys(CONTENDERS) as Framework[]) {
    for (const scenario of SCENARIOS) {
      for (const load of ['max', 'half'] as const) {
        const of = (limiter: LimiterKind) =>
          measurements.filter(
            (m) =>
              m.framework === framework &&
              m.scenario === scenario &&
              m.load === load &&
              m.limiter === limiter,
          );
        const baseline = of('none');
        for (const limiter of CONTENDERS[framework]) {
          const runs = of(limiter);
          if (runs.length === 0) continue;
          summaries.push({
            framework,
            scenario,
            load,
            limiter,
            name: contenderName(framework, limiter),
            rps: spread(runs.map((m) => m.rps)),
            ratio: spread(perRoundRatio(runs, baseline, (run, base) => run.rps / base.rps)),
            cpuRatio: spread(
              perRoundRatio(runs, baseline, (run, base) => base.cpuPerRequest / run.cpuPerRequest),
            ),
            cpuPerRequest: spread(runs.map((m) => m.cpuPerRequest)),
            busy: spread(runs.map((m) => m.busy)),
            p50: spread(runs.map((m) => m.p50)),
            p99: spread(runs.map((m) => m.p99)),
            redisPerRequest: spread(runs.map((m) => m.redisPerRequest)),
            redisExecutedPerRequest: spread(runs.map((m) => m.redisExecutedPerRequest)),
            redisCpuPerRequest: spread(runs.map((m) => m.redisCpuPerRequest)),
            cpu1PerRequest: spread(runs.map((m) => m.loadCpuPerRequest + m.redisCpuPerRequest)),
            failedOpen: runs.reduce((sum, m) => sum + m.failedOpen, 0),
            rejectedOrErrors: runs.reduce((sum, m) => sum + m.non2xx + m.errors + m.timeouts, 0),
            rounds: runs.length,
          });
        }
      }
    }
  }
  return summaries;
}

/** A target of issue 6, checked against the run. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | undefined;
}

/** Per round: contender a's throughput over contender b's (the best of `b` in that round). */
function versus(
  measurements: readonly Measurement[],
  framework: Framework,
  scenario: Scenario,
  a: LimiterKind,
  b: readonly LimiterKind[],
): Spread {
  const runs = (limiter: LimiterKind) =>
    measurements.filter(
      (m) =>
        m.framework === framework && m.scenario === scenario && m.load === 'max' && m.limiter === limiter,
    );
  const ratios = runs(a).flatMap((run) => {
    const best = Math.max(
      ...b.flatMap((limiter) =>
        runs(limiter)
          .filter((m) => m.round === run.round)
          .map((m) => m.rps),
      ),
    );
    return best > 0 ? [run.rps / best] : [];
  });
  return spread(ratios);
}

/** The targets, each with what this run measured. */
export function checkTargets(
  measurements: readonly Measurement[],
  summaries: readonly Summary[],
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const find = (
    framework: Framework,
    scenario: Scenario,
    limiter: LimiterKind,
    load: 'max' | 'half' = 'max',
  ) =>
    summaries.find(
      (s) => s.framework === framework && s.scenario === scenario && s.limiter === limiter && s.load === load,
    );
  for (const framework of ['fastify', 'express'] as const) {
    for (const scenario of ['rotating', 'user', 'three'] as const) {
      const s = find(framework, scenario, 'sluice-memory');
      if (!s) continue;
      checks.push({
        target: `MemoryStore ≥ 0.90 of ${framework} (${MEMORY_TARGET_SETUP[scenario]})`,
        measured: `req/s ${showSpread(s.ratio)}; CPU ${showSpread(s.cpuRatio)}`,
        met: s.ratio.median >= 0.9 && s.cpuRatio.median >= 0.9,
      });
      const peer = find(framework, scenario, 'peer-memory');
      if (scenario === 'user' && peer) {
        const added = (x: Summary) =>
          x.cpuPerRequest.median - (find(framework, scenario, 'none')?.cpuPerRequest.median ?? 0);
        checks.push({
          target: `MemoryStore ahead of ${contenderName(framework, 'peer-memory')} (${MEMORY_TARGET_SETUP[scenario]})`,
          measured: `req/s ratio ${showSpread(s.ratio)} vs ${showSpread(peer.ratio)}; added µs/req ${added(s).toFixed(1)} vs ${added(peer).toFixed(1)}`,
          met: s.ratio.median > peer.ratio.median,
        });
      }
    }
  }
  const oneRule = versus(measurements, 'fastify', 'rotating', 'sluice-redis', ['peer-redis']);
  const [sluiceOne, peerOne] = [
    find('fastify', 'rotating', 'sluice-redis'),
    find('fastify', 'rotating', 'peer-redis'),
  ];
  if (!Number.isNaN(oneRule.median) && sluiceOne && peerOne) {
    // Where each spends, per request: the server (CPU 0), and Redis with the load generator (CPU 1).
    const spent = (s: Summary) =>
      `server ${s.cpuPerRequest.median.toFixed(0)}, Redis ${s.redisCpuPerRequest.median.toFixed(1)}, CPU 1 ${s.cpu1PerRequest.median.toFixed(0)}`;
    checks.push({
      target: 'Redis, 1 rule: ≥ 1.4× @fastify/rate-limit on Redis (Fastify, 10,000 keys)',
      measured: `${showSpread(oneRule)}×; µs/req Sluice ${spent(sluiceOne)} vs peer ${spent(peerOne)}`,
      met: oneRule.median >= 1.4,
    });
  }
  for (const framework of Object.keys(CONTENDERS) as Framework[]) {
    const s = find(framework, 'three', 'sluice-redis');
    if (!s) continue;
    // One call per request carries all three checks; coalescing puts several requests in one call.
    const single = find(framework, 'three', 'sluice-redis-per-request');
    checks.push({
      target: `Redis, 3 rules: at most 1 Redis command per request (${framework})`,
      measured:
        `${showSpread(s.redisPerRequest, 3)} coalesced` +
        (single ? `; ${showSpread(single.redisPerRequest, 3)} with coalesce: false` : ''),
      met:
        s.redisPerRequest.max <= 1.001 &&
        (single === undefined ||
          (single.redisPerRequest.max <= 1.001 && single.redisPerRequest.min >= 0.999)),
    });
    const peers = CONTENDERS[framework].filter((l) => l === 'peer-redis' || l === 'rlflex-redis');
    const vsPeers = versus(measurements, framework, 'three', 'sluice-redis', peers);
    checks.push({
      target: `Redis, 3 rules: ≥ 2× the best peer stacking 3 limiters (${framework})`,
      measured: `${showSpread(vsPeers)}×`,
      met: vsPeers.median >= 2,
    });
    const addedCpu = (limiter: LimiterKind) => {
      const x = find(framework, 'three', limiter);
      const none = find(framework, 'three', 'none');
      return x && none ? x.cpuPerRequest.median - none.cpuPerRequest.median : Number.NaN;
    };
    const peerAdded = Math.min(...peers.map(addedCpu).filter(Number.isFinite));
    if (framework === 'express' && Number.isFinite(peerAdded)) {
      checks.push({
        target: 'Redis, 3 rules: at most half the server CPU the best peer adds (express)',
        measured: `Sluice adds ${addedCpu('sluice-redis').toFixed(0)} µs/req, the best peer ${peerAdded.toFixed(0)}`,
        met: addedCpu('sluice-redis') <= peerAdded / 2,
      });
    }
    const half = find(framework, 'three', 'sluice-redis', 'half');
    const base = find(framework, 'three', 'none', 'half');
    if (half && base) {
      const added = half.p99.median - base.p99.median;
      checks.push({
        target: `Redis, 3 rules: added p99 ≤ 2 ms at half load (${framework})`,
        measured: `${added.toFixed(1)} ms (p99 ${half.p99.median} vs ${base.p99.median} ms)`,
        met: added <= 2,
      });
    }
  }
  return checks;
}

const MEMORY_TARGET_SETUP = {
  rotating: 'minimal: 1 rule, 10,000 keys',
  user: 'user-style rules file, 10,000 keys',
  three: '3 rules',
} as const;

const SCENARIO_TITLE: Record<Scenario, string> = {
  hot: 'one hot key (1 rule)',
  rotating: '10,000 rotating keys (1 rule)',
  user: '10,000 rotating keys, user-style rules file (2 rules with match conditions, default logger)',
  three: '3 rules per request: per key (10,000), per tenant (100), global',
};

function table(summaries: readonly Summary[]): string[] {
  const lines = [
    '| contender | req/s ratio | CPU ratio | req/s | p50 ms | p99 ms | server µs/req | server busy | Redis cmds/req sent (run) | Redis µs/req | CPU 1 µs/req | failed open |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of summaries) {
    const base = s.limiter === 'none';
    const invalid = s.rejectedOrErrors > 0 ? ` (${s.rejectedOrErrors} non-2xx/errors)` : '';
    const cells = [
      s.name,
      base ? '1' : showSpread(s.ratio),
      base ? '1' : showSpread(s.cpuRatio),
      showSpread(s.rps, 0),
      String(s.p50.median),
      String(s.p99.median),
      s.cpuPerRequest.median.toFixed(0),
      `${(100 * s.busy.median).toFixed(0)}%`,
      s.limiter.includes('redis')
        ? `${s.redisPerRequest.median.toFixed(2)} (${s.redisExecutedPerRequest.median.toFixed(1)})`
        : '–',
      s.limiter.includes('redis') ? s.redisCpuPerRequest.median.toFixed(1) : '–',
      s.cpu1PerRequest.median.toFixed(0),
      `${s.limiter.startsWith('sluice') ? s.failedOpen : 'n/a'}${invalid}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
}

/** The markdown report: machine, ratios table per framework and scenario, targets, micro-benchmarks. */
export function markdown(
  input: ResultsInput,
  summaries: readonly Summary[],
  targets: readonly TargetCheck[],
): string {
  const { settings, machine } = input;
  const lines = [
    '# Sluice benchmark: latest run',
    '',
    `${machine.date}, commit ${machine.commit}, ${settings.quick ? 'quick' : 'full'} run (${input.seconds} s).`,
    `Machine: ${machine.summary}.`,
    `Servers pinned to CPU 0; autocannon and redis-server to CPU 1; loopback. ${settings.connections} connections,`,
    `${settings.rounds} rounds of ${settings.durationS} s per contender, interleaved round-robin; medians with (min–max).`,
    "req/s ratio: per round, the contender's req/s over its framework's no-limiter baseline in the same round.",
    "CPU ratio: per round, the baseline's server CPU time per request over the contender's: the throughput ratio",
    'the server would have if it were saturated (on this shared 2-CPU machine the load generator often saturates',
    'first: see "server busy"). A MemoryStore target counts as met only if both ratios reach it.',
    'Redis cmds/req: commands the server sent per request, counted on its ioredis clients (a script call is one);',
    'in brackets, commands Redis ran per request by INFO commandstats, those run inside scripts included.',
    'Redis µs/req: redis-server CPU time per request (INFO cpu); Redis shares CPU 1 with the load generator.',
    'CPU 1 µs/req: the load generator (autocannon) and redis-server together, per request: when CPU 1 is full',
    '(1,000,000 / this = the req/s it allows), no limiter on CPU 0 can go faster.',
    'Nothing is rejected (limits of 10⁹ per minute); "failed open" counts Sluice decisions that did not reach the',
    'store (a valid run has 0); peers do not report theirs.',
    '',
    '## Targets',
    '',
    '| target | measured | met |',
    '|---|---|---|',
    ...targets.map(
      (t) => `| ${t.target} | ${t.measured} | ${t.met === undefined ? '–' : t.met ? 'yes' : '**no**'} |`,
    ),
  ];
  for (const framework of Object.keys(CONTENDERS) as Framework[]) {
    for (const scenario of SCENARIOS) {
      for (const load of ['max', 'half'] as const) {
        const rows = summaries.filter(
          (s) => s.framework === framework && s.scenario === scenario && s.load === load,
        );
        if (rows.length === 0) continue;
        const title =
          load === 'half'
            ? `${SCENARIO_TITLE[scenario]}, at half of Sluice-on-Redis's maximum`
            : SCENARIO_TITLE[scenario];
        lines.push('', `## ${framework}: ${title}`, '', ...table(rows));
      }
    }
  }
  if (input.micro) lines.push('', '## Micro-benchmarks', '', ...input.micro.lines);
  return `${lines.join('\n')}\n`;
}

/** Everything a run produced. */
export interface ResultsInput {
  readonly settings: Settings;
  readonly machine: Machine;
  readonly measurements: readonly Measurement[];
  readonly micro: MicroResults | undefined;
  readonly seconds: number;
}

/** Writes `<name>.md` and `<name>.json` (latest unless told otherwise); returns their paths. */
export async function writeResults(name: string, input: ResultsInput): Promise<string[]> {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const summaries = summarize(input.measurements);
  const targets = checkTargets(input.measurements, summaries);
  const md = `${dir}${name}.md`;
  const json = `${dir}${name}.json`;
  writeFileSync(md, markdown(input, summaries, targets));
  writeFileSync(json, `${JSON.stringify({ ...input, summaries, targets }, null, 2)}\n`);
  return [md, json];
}

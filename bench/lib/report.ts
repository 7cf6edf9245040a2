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

/** One profiled run of a memory contender: the limiter's own code per request (see ownCode.ts). */
export interface OwnCode {
  readonly framework: Framework;
  readonly limiter: LimiterKind;
  readonly scenario: Scenario;
  readonly round: number;
  readonly rps: number;
  /** µs per request in the limiter's own code (and what it calls, up to the route). */
  readonly ownMicros: number;
  /** The whole process's µs per request not idle, the profiler's own included. */
  readonly busyMicros: number;
  /** Of which in the garbage collector, which the own-code figure leaves out. */
  readonly collectingMicros: number;
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

/** A target of issue 24, checked against the run. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | undefined;
}

/** The peers a Redis contender is compared with on a framework (each of them stacks 3 limiters for 3 rules). */
const REDIS_PEERS: readonly LimiterKind[] = ['peer-redis', 'rlflex-redis'];

/**
 * What a contender costs per request in one round, µs: `total` is server CPU plus Redis CPU; `limiter` is the
 * server CPU it adds over the framework alone in the same round, plus Redis CPU (what the limiter itself costs:
 * on Express, the framework alone costs more than half the best peer's total, so a total-based half is out of
 * any limiter's reach there).
 */
type CostKind = 'total' | 'limiter';

/** Per-round figures of one contender, with the same round's baseline (the framework alone). */
class Rounds {
  readonly #measurements: readonly Measurement[];

  constructor(measurements: readonly Measurement[]) {
    this.#measurements = measurements;
  }

  of(framework: Framework, scenario: Scenario, limiter: LimiterKind, load: 'max' | 'half' = 'max') {
    return this.#measurements.filter(
      (m) => m.framework === framework && m.scenario === scenario && m.limiter === limiter && m.load === load,
    );
  }

  /** The framework alone's run of the same round and load. */
  #baseOf(run: Measurement): Measurement | undefined {
    return this.of(run.framework, run.scenario, 'none', run.load).find((b) => b.round === run.round);
  }

  /** Server CPU over the framework alone's in the same round, µs per request. */
  added(run: Measurement): number {
    const base = this.#baseOf(run);
    return base === undefined ? Number.NaN : run.cpuPerRequest - base.cpuPerRequest;
  }

  /** p99 latency over the framework alone's in the same round, at half load, ms. */
  addedP99(framework: Framework, scenario: Scenario, limiter: LimiterKind): Spread {
    const added = this.of(framework, scenario, limiter, 'half').flatMap((run) => {
      const base = this.#baseOf(run);
      return base === undefined ? [] : [run.p99 - base.p99];
    });
    return spread(added);
  }

  cost(run: Measurement, kind: CostKind): number {
    const server = kind === 'total' ? run.cpuPerRequest : this.added(run);
    return server + run.redisCpuPerRequest;
  }

  /** Per round: `value(sluice run)` over the best (lowest, or highest with `best: 'max'`) peer's in that round. */
  versus(
    framework: Framework,
    scenario: Scenario,
    limiter: LimiterKind,
    peers: readonly LimiterKind[],
    value: (run: Measurement) => number,
    best: 'min' | 'max',
  ): Spread {
    const ratios = this.of(framework, scenario, limiter).flatMap((run) => {
      const theirs = peers
        .flatMap((peer) => this.of(framework, scenario, peer).filter((m) => m.round === run.round))
        .map(value)
        .filter(Number.isFinite);
      if (theirs.length === 0) return [];
      const pick = best === 'min' ? Math.min(...theirs) : Math.max(...theirs);
      return pick > 0 ? [value(run) / pick] : [];
    });
    return spread(ratios.filter(Number.isFinite));
  }
}

/** Issue 24's targets, each with what this run measured (per-round ratios: rounds are interleaved). */
export function checkTargets(
  measurements: readonly Measurement[],
  summaries: readonly Summary[],
  ownCode: readonly OwnCode[] = [],
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const rounds = new Rounds(measurements);
  const find = (
    framework: Framework,
    scenario: Scenario,
    limiter: LimiterKind,
    load: 'max' | 'half' = 'max',
  ) =>
    summaries.find(
      (s) => s.framework === framework && s.scenario === scenario && s.limiter === limiter && s.load === load,
    );
  const addedSpread = (framework: Framework, scenario: Scenario, limiter: LimiterKind) =>
    spread(
      rounds
        .of(framework, scenario, limiter)
        .map((run) => rounds.added(run))
        .filter(Number.isFinite),
    );

  for (const framework of ['fastify', 'koa'] as const) {
    for (const scenario of ['rotating', 'user'] as const) {
      const sluice = addedSpread(framework, scenario, 'sluice-memory');
      const peer = addedSpread(framework, scenario, 'peer-memory');
      if (Number.isNaN(sluice.median) || Number.isNaN(peer.median)) continue;
      const added = `added server µs/req Sluice ${showSpread(sluice, 1)}, peer ${showSpread(peer, 1)}`;
      const own = ownCodeCheck(ownCode, framework, scenario);
      checks.push({
        target: `${framework}, memory, ${MEMORY_TARGET_SETUP[scenario]}: the limiter's own µs/req ≤ ${contenderName(framework, 'peer-memory')}'s and ≤ 3 (quiet machine)`,
        measured: own === undefined ? `${added} (no profiled rounds)` : `${own.measured}; ${added}`,
        met: own === undefined ? sluice.median <= peer.median && sluice.median <= 3 : own.met,
      });
    }
  }

  const costs = (framework: Framework, scenario: Scenario, kind: CostKind) =>
    rounds.versus(framework, scenario, 'sluice-redis', REDIS_PEERS, (run) => rounds.cost(run, kind), 'min');
  const rps = (framework: Framework, scenario: Scenario) =>
    rounds.versus(framework, scenario, 'sluice-redis', REDIS_PEERS, (run) => run.rps, 'max');
  const spent = (s: Summary | undefined) =>
    s === undefined
      ? '–'
      : `${s.cpuPerRequest.median.toFixed(0)} + ${s.redisCpuPerRequest.median.toFixed(1)}`;
  const bestPeer = (framework: Framework, scenario: Scenario) =>
    REDIS_PEERS.map((peer) => find(framework, scenario, peer))
      .filter((s): s is Summary => s !== undefined)
      .sort(
        (a, b) =>
          a.cpuPerRequest.median +
          a.redisCpuPerRequest.median -
          b.cpuPerRequest.median -
          b.redisCpuPerRequest.median,
      )[0];
  const redisRow = (framework: Framework, scenario: 'rotating' | 'three', most: number, minRps?: number) => {
    const total = costs(framework, scenario, 'total');
    if (Number.isNaN(total.median)) return;
    const limiter = costs(framework, scenario, 'limiter');
    const speed = rps(framework, scenario);
    const rules = scenario === 'three' ? '3 rules' : '1 rule';
    checks.push({
      target: `${framework}, Redis, ${rules}: server + Redis µs/req ≤ ${most}× the best peer's`,
      measured:
        `total ${showSpread(total)}× (Sluice ${spent(find(framework, scenario, 'sluice-redis'))}, peer ${spent(bestPeer(framework, scenario))}); ` +
        `the limiter's own (server added + Redis) ${showSpread(limiter)}×`,
      met: total.median <= most,
    });
    if (minRps !== undefined)
      checks.push({
        target: `${framework}, Redis, ${rules}: req/s ≥ ${minRps}× the best peer's`,
        measured: `${showSpread(speed)}× per round`,
        met: speed.median >= minRps,
      });
  };
  redisRow('fastify', 'rotating', 0.8, 1);
  redisRow('fastify', 'three', 0.5, 1.5);
  redisRow('express', 'three', 0.5);
  redisRow('koa', 'three', 0.5);

  for (const framework of Object.keys(CONTENDERS) as Framework[]) {
    const s = find(framework, 'three', 'sluice-redis');
    if (!s) continue;
    // One call per request carries all three checks; coalescing puts several requests in one call.
    const single = find(framework, 'three', 'sluice-redis-per-request');
    checks.push({
      target: `${framework}, Redis, 3 rules: at most 1 round trip per request`,
      measured:
        `${showSpread(s.redisPerRequest, 3)} coalesced` +
        (single ? `; ${showSpread(single.redisPerRequest, 3)} with coalesce: false` : ''),
      met:
        s.redisPerRequest.max <= 1.001 &&
        (single === undefined ||
          (single.redisPerRequest.max <= 1.001 && single.redisPerRequest.min >= 0.999)),
    });
    const half = find(framework, 'three', 'sluice-redis', 'half');
    const base = find(framework, 'three', 'none', 'half');
    if (half && base) {
      const added = rounds.addedP99(framework, 'three', 'sluice-redis');
      const peers = REDIS_PEERS.map((peer) => rounds.addedP99(framework, 'three', peer)).filter(
        (s) => !Number.isNaN(s.median),
      );
      checks.push({
        target: `${framework}, Redis, 3 rules: added p99 ≤ 1 ms at half load`,
        measured:
          `${showSpread(added, 1)} ms per round (p99 ${half.p99.median} vs ${base.p99.median} ms)` +
          (peers.length > 0 ? `; peers ${peers.map((s) => showSpread(s, 1)).join(', ')} ms` : ''),
        met: added.median <= 1,
      });
    }
  }
  checks.push(...spreadTargets(rounds, ownCode));
  const sluiceRows = summaries.filter((s) => s.limiter.startsWith('sluice'));
  if (sluiceRows.length > 0) {
    const failedOpen = sluiceRows.reduce((sum, s) => sum + s.failedOpen, 0);
    checks.push({
      target: 'Defaults under load: no Sluice decision fails open while Redis answers',
      measured: `${failedOpen} failed open over ${sluiceRows.length} Sluice rows, every store on its defaults`,
      met: failedOpen === 0,
    });
  }
  return checks;
}

/** `0.93 (0.90–1.05), spread crosses 1.0` when its rounds fall on both sides of 1. */
function showRatio(s: Spread): string {
  return `${showSpread(s)}×${s.min < 1 && s.max > 1 ? ', spread crosses 1.0' : ''}`;
}

/**
 * Issue 46's rows: each ratio per round against the best peer of the same round, met only when every round
 * meets it (the whole spread, not the median).
 */
function spreadTargets(rounds: Rounds, ownCode: readonly OwnCode[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const row = (target: string, ratio: Spread, met: (s: Spread) => boolean) => {
    if (!Number.isNaN(ratio.median)) checks.push({ target, measured: showRatio(ratio), met: met(ratio) });
  };
  const memoryAdded = (framework: Framework, scenario: Scenario) =>
    rounds.versus(framework, scenario, 'sluice-memory', ['peer-memory'], (run) => rounds.added(run), 'min');
  row(
    "fastify, Redis, 3 rules: req/s ≥ 1.5× the best stacking peer's in every round",
    rounds.versus('fastify', 'three', 'sluice-redis', REDIS_PEERS, (run) => run.rps, 'max'),
    (s) => s.min >= 1.5,
  );
  row(
    "express, Redis, 3 rules: added server + Redis µs/req ≤ 0.5× the best peer's in every round",
    rounds.versus(
      'express',
      'three',
      'sluice-redis',
      REDIS_PEERS,
      (run) => rounds.cost(run, 'limiter'),
      'min',
    ),
    (s) => s.max <= 0.5,
  );
  row(
    "express, memory, 1 rule: added server µs/req below express-rate-limit's in every round",
    memoryAdded('express', 'rotating'),
    (s) => s.max < 1,
  );
  row(
    "fastify, memory, one hot key: added server µs/req ≤ @fastify/rate-limit's in every round",
    memoryAdded('fastify', 'hot'),
    (s) => s.max <= 1,
  );
  // The same two memory rows on the profiled rounds: the limiter's own code in the serving process, per round.
  const own = (framework: Framework, scenario: Scenario) =>
    spread(ownCodeRatios(ownCode, framework, scenario));
  row(
    "express, memory, 1 rule: the limiter's own µs/req below express-rate-limit's in every round (profiled)",
    own('express', 'rotating'),
    (s) => s.max < 1,
  );
  row(
    "fastify, memory, one hot key: the limiter's own µs/req ≤ @fastify/rate-limit's in every round (profiled)",
    own('fastify', 'hot'),
    (s) => s.max <= 1,
  );
  return checks;
}

/** Per profiled round: Sluice's own code over the peer's in the same round. */
function ownCodeRatios(ownCode: readonly OwnCode[], framework: Framework, scenario: Scenario): number[] {
  const of = (limiter: LimiterKind) =>
    ownCode.filter((o) => o.framework === framework && o.scenario === scenario && o.limiter === limiter);
  const peer = of('peer-memory');
  return of('sluice-memory').flatMap((run) => {
    const theirs = peer.find((p) => p.round === run.round);
    return theirs === undefined || theirs.ownMicros <= 0 ? [] : [run.ownMicros / theirs.ownMicros];
  });
}

/**
 * The memory target on the profiled rounds: Sluice's own code against the peer's, per round (rounds are
 * interleaved), and Sluice's own figure against 3 µs.
 */
function ownCodeCheck(
  ownCode: readonly OwnCode[],
  framework: Framework,
  scenario: Scenario,
): { measured: string; met: boolean } | undefined {
  const of = (limiter: LimiterKind) =>
    ownCode.filter((o) => o.framework === framework && o.scenario === scenario && o.limiter === limiter);
  const sluice = of('sluice-memory');
  const peer = of('peer-memory');
  const ratios = ownCodeRatios(ownCode, framework, scenario);
  if (ratios.length === 0) return undefined;
  const ratio = spread(ratios);
  const sluiceOwn = spread(sluice.map((o) => o.ownMicros));
  const peerOwn = spread(peer.map((o) => o.ownMicros));
  return {
    measured: `own code Sluice ${showSpread(sluiceOwn)}, peer ${showSpread(peerOwn)}; per round ${showSpread(ratio)}×`,
    met: ratio.median <= 1 && sluiceOwn.median <= 3,
  };
}

/** The profiled rounds' table: own code, busy and garbage collection per request, per contender. */
function ownCodeTable(ownCode: readonly OwnCode[]): string[] {
  if (ownCode.length === 0) return [];
  const lines = [
    '',
    "## The limiter's own code (memory, profiled rounds)",
    '',
    "After each group's measured rounds, the memory contenders run again, interleaved, under V8's profiler",
    "(bench/lib/ownCode.ts): the limiter's own code is the samples whose stack reaches its files before the",
    'framework goes on to the route, per request; busy and gc are the whole process (the profiler included).',
    '',
    '| framework | scenario | contender | own µs/req | busy µs/req | gc µs/req | req/s | rounds |',
    '|---|---|---|---|---|---|---|---|',
  ];
  // One row per contender and scenario, in the order they were first profiled.
  const rows = new Map<string, OwnCode[]>();
  for (const o of ownCode) {
    const key = `${o.framework} ${o.scenario} ${o.limiter}`;
    rows.set(key, [...(rows.get(key) ?? []), o]);
  }
  for (const runs of rows.values()) {
    const { framework, scenario, limiter } = runs[0]!;
    const cells = [
      framework,
      scenario,
      contenderName(framework, limiter),
      showSpread(spread(runs.map((o) => o.ownMicros))),
      showSpread(spread(runs.map((o) => o.busyMicros)), 1),
      showSpread(spread(runs.map((o) => o.collectingMicros))),
      showSpread(spread(runs.map((o) => o.rps)), 0),
      String(runs.length),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines;
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
  lines.push(...ownCodeTable(input.ownCode ?? []));
  if (input.micro) lines.push('', '## Micro-benchmarks', '', ...input.micro.lines);
  return `${lines.join('\n')}\n`;
}

/** Everything a run produced. */
export interface ResultsInput {
  readonly settings: Settings;
  readonly machine: Machine;
  readonly measurements: readonly Measurement[];
  /** The profiled rounds of the memory contenders; absent in runs from before they were added. */
  readonly ownCode?: readonly OwnCode[];
  readonly micro: MicroResults | undefined;
  readonly seconds: number;
}

/** Writes `<name>.md` and `<name>.json` (latest unless told otherwise); returns their paths. */
export async function writeResults(name: string, input: ResultsInput): Promise<string[]> {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const summaries = summarize(input.measurements);
  const targets = checkTargets(input.measurements, summaries, input.ownCode);
  const md = `${dir}${name}.md`;
  const json = `${dir}${name}.json`;
  writeFileSync(md, markdown(input, summaries, targets));
  writeFileSync(json, `${JSON.stringify({ ...input, summaries, targets }, null, 2)}\n`);
  return [md, json];
}

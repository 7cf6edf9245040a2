/**
 * The benchmark suite: `pnpm bench` (full) or `pnpm bench --quick`. Servers run pinned to CPU 0, autocannon
 * and a private redis-server to CPU 1; contenders of a framework run side by side and are measured
 * round-robin, seconds apart, over several rounds; medians with min–max go to bench/results/latest.{md,json}.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildForBench } from './lib/build.js';
import { type BenchServer, type LoadGenerator, startLoad, startServer } from './lib/children.js';
import { runMicroBenchmarks } from './lib/micro.js';
import { type CpuProfile, ownCodeOf, ownMicros, processMicros } from './lib/ownCode.js';
import { type Settings, settingsFrom } from './lib/plan.js';
import { type BenchRedis, startBenchRedis } from './lib/redis.js';
import { describeMachine, type Measurement, type OwnCode, writeResults } from './lib/report.js';
import {
  CONTENDERS,
  type Framework,
  FULL_RUN_ONLY,
  RULE_SET_TITLE,
  type RuleSet,
  SCENARIOS_OF,
  type Scenario,
  usesRedis,
} from './lib/spec.js';
import { rotate, spread } from './lib/stats.js';

interface Context {
  readonly settings: Settings;
  readonly redis: BenchRedis;
  readonly load: LoadGenerator;
  readonly measurements: Measurement[];
  readonly ownCode: OwnCode[];
}

/** One measured run: load, Redis commands and the server's decision counters before and after. */
async function measure(
  ctx: Context,
  server: BenchServer,
  scenario: Scenario,
  round: number,
  rate?: number,
): Promise<Measurement> {
  const commandsBefore = await ctx.redis.commands();
  const redisCpuBefore = await ctx.redis.cpuMicros();
  const statsBefore = await server.stats();
  const result = await ctx.load.run({
    url: server.url,
    scenario,
    connections: ctx.settings.connections,
    durationS: ctx.settings.durationS,
    ...(rate !== undefined ? { rate } : {}),
  });
  const statsAfter = await server.stats();
  // Every command Redis ran, those inside scripts included (INFO itself left out).
  const commands = (await ctx.redis.commands()) - commandsBefore;
  const redisCpu = (await ctx.redis.cpuMicros()) - redisCpuBefore;
  const { framework, limiter } = server.spec;
  const measurement: Measurement = {
    framework,
    limiter,
    scenario,
    load: rate === undefined ? 'max' : 'half',
    round,
    ...result,
    // Per request the server began: requests still in flight when autocannon stops have sent their commands.
    redisPerRequest:
      (statsAfter.redisCommands - statsBefore.redisCommands) /
      Math.max(1, statsAfter.requests - statsBefore.requests),
    redisExecutedPerRequest: usesRedis(limiter) ? commands / Math.max(1, result.total) : 0,
    redisCpuPerRequest: usesRedis(limiter) ? redisCpu / Math.max(1, result.total) : 0,
    loadCpuPerRequest: result.loadCpuMicros / Math.max(1, result.total),
    decisions: statsAfter.decisions - statsBefore.decisions,
    failedOpen: statsAfter.failedOpen - statsBefore.failedOpen,
    denied: statsAfter.denied - statsBefore.denied,
    storeErrors: statsAfter.storeErrors - statsBefore.storeErrors,
    cpuPerRequest: (statsAfter.cpuMicros - statsBefore.cpuMicros) / Math.max(1, result.total),
    busy: (statsAfter.cpuMicros - statsBefore.cpuMicros) / (result.durationS * 1e6),
  };
  ctx.measurements.push(measurement);
  const flag = measurement.failedOpen + measurement.non2xx + measurement.errors > 0 ? '  INVALID' : '';
  console.log(
    `  r${round} ${scenario.padEnd(8)} ${limiter.padEnd(22)} ${Math.round(result.rps).toString().padStart(6)} req/s` +
      `  p50 ${result.p50} p99 ${result.p99} ms  cpu ${measurement.cpuPerRequest.toFixed(0)} µs/req` +
      ` busy ${(100 * measurement.busy).toFixed(0)}%  redis/req ${measurement.redisPerRequest.toFixed(2)}` +
      ` (${measurement.redisCpuPerRequest.toFixed(1)} µs)  load ${measurement.loadCpuPerRequest.toFixed(0)} µs/req` +
      `  failedOpen ${measurement.failedOpen}${flag}`,
  );
  await sleep(ctx.settings.pauseMs);
  return measurement;
}

/** All contenders of one framework and rule set: started together, warmed up, measured round-robin. */
async function group(ctx: Context, framework: Framework, rules: RuleSet): Promise<void> {
  const scenarios = SCENARIOS_OF[rules].filter((s) => ctx.settings.scenarios.includes(s));
  if (scenarios.length === 0) return;
  console.log(`${framework}, ${RULE_SET_TITLE[rules]}`);
  const servers: BenchServer[] = [];
  try {
    for (const limiter of CONTENDERS[framework]) {
      if (ctx.settings.quick && FULL_RUN_ONLY.has(limiter)) continue;
      if (ctx.settings.only !== undefined && !ctx.settings.only.includes(limiter)) continue;
      const prefix = `b${framework[0]}${rules[0]}${servers.length}`;
      servers.push(
        await startServer({ framework, limiter, rules, redisPort: ctx.redis.server.port, prefix }),
      );
    }
    for (const server of servers) {
      await ctx.load.run({
        url: server.url,
        scenario: scenarios[0]!,
        connections: ctx.settings.connections,
        durationS: ctx.settings.warmupS,
      });
    }
    for (let round = 1; round <= ctx.settings.rounds; round++) {
      for (const scenario of scenarios) {
        for (const server of rotate(servers, round)) await measure(ctx, server, scenario, round);
      }
    }
    if (rules === 'three' && ctx.settings.halfLoad) await halfLoad(ctx, framework, servers);
    if (rules !== 'three' && ctx.settings.ownCode) await ownCodeRounds(ctx, servers, scenarios);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** Latency at half of Sluice-on-Redis's maximum throughput, every contender at that same rate. */
async function halfLoad(ctx: Context, framework: Framework, servers: readonly BenchServer[]): Promise<void> {
  const max = ctx.measurements.filter(
    (m) =>
      m.framework === framework && m.scenario === 'three' && m.limiter === 'sluice-redis' && m.load === 'max',
  );
  const rate = Math.round(spread(max.map((m) => m.rps)).median / 2);
  if (!Number.isFinite(rate) || rate <= 0) return;
  console.log(`${framework}, three rules at ${rate} req/s (half of Sluice on Redis)`);
  for (let round = 1; round <= ctx.settings.rounds; round++) {
    for (const server of rotate(servers, round)) await measure(ctx, server, 'three', round, rate);
  }
}

/** The memory contenders' own code per request, in profiled rounds of their own (see ownCode.ts). */
async function ownCodeRounds(
  ctx: Context,
  servers: readonly BenchServer[],
  scenarios: readonly Scenario[],
): Promise<void> {
  const profiled = servers.filter(
    (s) => s.spec.limiter === 'sluice-memory' || s.spec.limiter === 'peer-memory',
  );
  const measured = scenarios.filter((scenario) => scenario !== 'three');
  if (profiled.length === 0 || measured.length === 0) return;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-own-'));
  try {
    for (let round = 1; round <= ctx.settings.rounds; round++) {
      for (const scenario of measured) {
        for (const server of rotate(profiled, round))
          ctx.ownCode.push(await ownCodeRun(ctx, server, scenario, round, dir));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One profiled run of a memory contender: its own code, busy and collecting µs per request. */
async function ownCodeRun(
  ctx: Context,
  server: BenchServer,
  scenario: Scenario,
  round: number,
  dir: string,
): Promise<OwnCode> {
  const { framework, limiter } = server.spec;
  const file = join(dir, `${framework}-${limiter}-${scenario}-${round}.cpuprofile`);
  const before = await server.stats();
  const job = {
    url: server.url,
    scenario,
    connections: ctx.settings.connections,
    durationS: ctx.settings.durationS,
  };
  const result = await server.profiled(() => ctx.load.run(job), file);
  const requests = Math.max(1, (await server.stats()).requests - before.requests);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  rmSync(file);
  const { busy, collecting } = processMicros(profile, requests);
  const own: OwnCode = {
    framework,
    limiter,
    scenario,
    round,
    rps: result.rps,
    ownMicros: ownMicros(profile, ownCodeOf(framework, limiter), requests),
    busyMicros: busy,
    collectingMicros: collecting,
  };
  console.log(
    `  r${round} ${scenario.padEnd(8)} ${limiter.padEnd(22)} profiled: own code ${own.ownMicros.toFixed(2)} µs/req` +
      `  busy ${busy.toFixed(1)}  gc ${collecting.toFixed(2)} µs/req  ${Math.round(result.rps)} req/s`,
  );
  await sleep(ctx.settings.pauseMs);
  return own;
}

// Ctrl-C: exit through process.exit, whose handlers stop the servers, the load generator and redis-server.
process.once('SIGINT', () => process.exit(130));

async function main(): Promise<void> {
  const settings = settingsFrom(process.argv.slice(2));
  const started = Date.now();
  if (settings.build) buildForBench();
  const redis = await startBenchRedis();
  const load = startLoad();
  const ctx: Context = { settings, redis, load, measurements: [], ownCode: [] };
  try {
    const machine = await describeMachine(redis);
    console.log(`bench: ${settings.quick ? 'quick' : 'full'} run on ${machine.summary}`);
    for (const framework of settings.frameworks) {
      for (const rules of ['one', 'user', 'three'] as const) await group(ctx, framework, rules);
    }
    const micro = settings.micro ? await runMicroBenchmarks() : undefined;
    const files = await writeResults(settings.out, {
      settings,
      machine,
      measurements: ctx.measurements,
      ownCode: ctx.ownCode,
      micro,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    console.log(`results: ${files.join(', ')}`);
  } finally {
    await load.stop();
    await redis.stop();
  }
}

await main();

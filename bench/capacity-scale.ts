/**
 * The source's example API against Redis, measured (issue 46): several gateway processes (each a Node process
 * with one client per contender) drive the limiters directly, no HTTP, with the source's key population (2 M API
 * keys, 200 k active at a time, the active set sliding by 200 k a minute, Zipf-skewed) and rules (600 a minute per
 * key on every request; /search, `--search-share` of the requests, 5,000 a second in all on one global key: 1.5
 * checks per request at the default share, the source's count). Against a private redis-server and a private
 * 3-primary Redis Cluster, each started here on free loopback ports and stopped by pid.
 *
 * Per contender: (1) the fill: every key touched once (with its TTL), Redis memory from INFO memory over the
 * emptied server; (2) interleaved rounds as fast as `--in-flight` requests per gateway allow, then (3) at a fixed
 * rate (half of the slowest contender's, or `--rate`). Redis CPU is the server's own (INFO cpu: used_cpu_user +
 * used_cpu_sys, every primary added up), script time from INFO commandstats; the rest is counted in the gateways.
 * What one core and a Cluster of N sustain at half load is extrapolated from those figures, and printed as such.
 *
 * Run: npx tsx bench/capacity-scale.ts [--keys=2000000 --active=200000 --zipf=1 --rotate=60 --search-share=0.5]
 *        [--gateways=3 --in-flight=32 --rounds=3 --seconds=6 --rate=half|<req/s> --modes=max,fixed]
 *        [--targets=single,cluster --cluster-fill=<keys, default --active> --others-fill=<keys> --no-fill]
 *        [--contenders=sluice,sluice-uncoalesced,sluice-binary,rlflex,fastify-store --sluice-timeout=<ms>]
 *        [--json=FILE]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type RedisServer, startCluster, startRedis } from '../test/support/redis.js';
import { CONTENDERS, type ContenderName, type Target } from './lib/capacity-contenders.js';
import type { GatewayCommand, GatewayTally } from './lib/capacity-gateway.js';
import { merge, quantile } from './lib/histogram.js';
import { Population } from './lib/population.js';
import { type NodeSnapshot, nodeDeltas, type RedisNodes, redisNodes, total } from './lib/redis-nodes.js';
import { rotate, showSpread, spread } from './lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const num = (name: string, fallback: number) => Number(args.get(name) ?? fallback);
const list = (name: string, fallback: readonly string[]) => args.get(name)?.split(',') ?? [...fallback];

const KEYS = num('keys', 2_000_000);
const ACTIVE = num('active', 200_000);
const POPULATION = { keys: KEYS, active: ACTIVE, zipf: num('zipf', 1), rotateMs: num('rotate', 60) * 1000 };
const SEARCH_SHARE = num('search-share', 0.5);
const GATEWAYS = num('gateways', 3);
const IN_FLIGHT = num('in-flight', 32);
const FILL_IN_FLIGHT = 128;
const ROUNDS = num('rounds', 3);
const SECONDS = num('seconds', 6);
const WARM_SECONDS = 2;
const RATE = args.get('rate') ?? 'half';
const MODES = list('modes', ['max', 'fixed']) as ('max' | 'fixed')[];
const TARGETS = list('targets', ['single', 'cluster']) as Target['kind'][];
const CLUSTER_FILL = num('cluster-fill', ACTIVE);
/** `--no-fill`: the rounds alone, no memory figures. */
const FILL = !args.has('no-fill');
/** Keys the other contenders fill on one server: their bytes per key do not depend on how many there are. */
const OTHERS_FILL = num('others-fill', ACTIVE);
/** By default every contender but sluice-binary (`stateFormat: 'binary'`, not Sluice's default). */
const NAMES = list(
  'contenders',
  CONTENDERS.filter((name) => name !== 'sluice-binary'),
) as ContenderName[];
/** Sluice's store on its defaults unless `--sluice-timeout=<ms>` (a fixed time limit, as bench/run.ts gives it). */
const SLUICE = args.has('sluice-timeout') ? { timeoutMs: num('sluice-timeout', 0) } : {};
for (const name of NAMES) if (!CONTENDERS.includes(name)) throw new Error(`unknown contender ${name}`);

/** The source's example: its peak and the share of a core it keeps each primary under. */
const SOURCE_RPS = 50_000;
const HALF = 0.5;

/** A gateway child: one command at a time, answered over IPC. */
class Gateway {
  private readonly child: ChildProcess;
  private queue: Promise<unknown> = Promise.resolve();

  constructor() {
    const script = fileURLToPath(new URL('./lib/capacity-gateway.ts', import.meta.url));
    this.child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  send<T>(command: GatewayCommand): Promise<T> {
    const reply = this.queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          const onExit = (code: number | null) =>
            reject(new Error(`gateway ${this.child.pid} exited: ${code}`));
          this.child.once('exit', onExit);
          this.child.once('message', (message: { type: string; error?: string }) => {
            this.child.off('exit', onExit);
            if (message.type === 'error') reject(new Error(message.error));
            else resolve(message as T);
          });
          this.child.send(command);
        }),
    );
    this.queue = reply.catch(() => {});
    return reply;
  }

  async tally(command: GatewayCommand): Promise<GatewayTally> {
    return (await this.send<{ tally: GatewayTally }>(command)).tally;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.send({ type: 'close' }).catch(() => {});
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** One measured stretch of one contender: the gateways' counts and each Redis node's own. */
interface Slice {
  readonly contender: ContenderName;
  readonly requests: number;
  readonly checks: number;
  readonly perSecond: number;
  readonly denied: number;
  readonly failedOpen: number;
  readonly errors: number;
  readonly skipped: number;
  readonly commands: number;
  readonly gatewayCpuUs: number;
  readonly latency: number[];
  readonly nodes: NodeSnapshot[];
}

function sliceOf(contender: ContenderName, tallies: GatewayTally[], nodes: NodeSnapshot[]): Slice {
  const sum = (pick: (t: GatewayTally) => number) => tallies.reduce((s, t) => s + pick(t), 0);
  const requests = sum((t) => t.requests);
  return {
    contender,
    requests,
    checks: sum((t) => t.checks),
    perSecond: requests / (Math.max(...tallies.map((t) => t.wallMs)) / 1000),
    denied: sum((t) => t.denied),
    failedOpen: sum((t) => t.failedOpen),
    errors: sum((t) => t.errors),
    skipped: sum((t) => t.skipped),
    commands: sum((t) => t.commands),
    gatewayCpuUs: sum((t) => t.cpuUs),
    latency: merge(tallies.map((t) => t.latency)),
    nodes,
  };
}

/** Runs the same command on every gateway (the range split among them for a fill) and reads Redis around it. */
async function measure(
  gateways: Gateway[],
  redis: RedisNodes,
  contender: ContenderName,
  command: (g: number) => GatewayCommand,
): Promise<Slice> {
  const before = await redis.snapshot();
  const tallies = await Promise.all(gateways.map((gateway, g) => gateway.tally(command(g))));
  const after = await redis.snapshot();
  return sliceOf(contender, tallies, nodeDeltas(before, after));
}

/** Memory of the contender's keys: every key of `keys` touched once on an emptied server. */
async function fill(gateways: Gateway[], redis: RedisNodes, contender: ContenderName, keys: number) {
  await redis.flush();
  // One request per gateway first (keys outside the range): scripts loaded, connections warm, before the baseline.
  await Promise.all(
    gateways.map((gateway, g) =>
      gateway.tally({ type: 'fill', contender, from: keys + g, to: keys + g + 1, inFlight: 1 }),
    ),
  );
  const share = Math.ceil(keys / gateways.length);
  const slice = await measure(gateways, redis, contender, (g) => ({
    type: 'fill',
    contender,
    from: g * share,
    to: Math.min(keys, (g + 1) * share),
    inFlight: FILL_IN_FLIGHT,
  }));
  await redis.flush();
  return slice;
}

/** Interleaved rounds of every contender, each starting with a different one; the first unreported (warm-up). */
async function rounds(
  gateways: Gateway[],
  redis: RedisNodes,
  t0: number,
  perGatewayRate: (name: ContenderName) => number,
): Promise<Map<ContenderName, Slice[]>> {
  const slices = new Map<ContenderName, Slice[]>(NAMES.map((name) => [name, []]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const contender of rotate(NAMES, round)) {
      const slice = await measure(gateways, redis, contender, () => ({
        type: 'run',
        contender,
        t0,
        seconds: round === 0 ? WARM_SECONDS : SECONDS,
        rate: perGatewayRate(contender),
        inFlight: IN_FLIGHT,
      }));
      if (round > 0) slices.get(contender)!.push(slice);
      console.error(
        `  round ${round}${round === 0 ? ' (warm-up)' : ''} ${contender}: ${Math.round(slice.perSecond)} req/s, ` +
          `Redis ${(total(slice.nodes).cpuUs / slice.requests).toFixed(1)} µs/req`,
      );
    }
  }
  return slices;
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '–');
const med = (slices: Slice[], pick: (s: Slice) => number) => spread(slices.map(pick));
/** A round in which a decision failed open or a store call failed measured something else: it is left out. */
const valid = (slices: Slice[]) => slices.filter((s) => s.failedOpen === 0 && s.errors === 0);
const cpuPerRequest = (s: Slice) => total(s.nodes).cpuUs / s.requests;

/** The table of one mode: one row per contender, medians (min–max) over its valid rounds. */
function modeTable(slices: Map<ContenderName, Slice[]>): string[] {
  const lines = [
    '| contender | valid rounds | req/s | Redis CPU µs/request | Redis CPU µs/check | script µs/check (commandstats) | script calls/request | commands sent/request | check p50 / p99 ms | gateway CPU µs/request | denied | failed open, errors (all rounds) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, all] of slices) {
    const runs = valid(all);
    const lat = merge(runs.map((s) => s.latency));
    const sum = (pick: (s: Slice) => number, of = runs) => of.reduce((a, s) => a + pick(s), 0);
    const cell = (pick: (s: Slice) => number, digits: number) => showSpread(med(runs, pick), digits);
    const skipped = sum((s) => s.skipped, all);
    lines.push(
      [
        name,
        `${runs.length} of ${all.length}`,
        cell((s) => s.perSecond, 0),
        cell(cpuPerRequest, 1),
        cell((s) => total(s.nodes).cpuUs / s.checks, 2),
        cell((s) => total(s.nodes).scriptUsec / s.checks, 2),
        cell((s) => total(s.nodes).scriptCalls / s.requests, 3),
        f(sum((s) => s.commands) / sum((s) => s.requests), 3),
        `${f(quantile(lat, 0.5) / 1000, 2)} / ${f(quantile(lat, 0.99) / 1000, 1)}`,
        cell((s) => s.gatewayCpuUs / s.requests, 0),
        `${f((100 * sum((s) => s.denied)) / sum((s) => s.requests))}%`,
        `${sum((s) => s.failedOpen, all)}, ${sum((s) => s.errors, all)}${skipped > 0 ? ` (${skipped} not sent)` : ''}`,
      ]
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    );
  }
  return lines;
}

function fillTable(fills: Map<ContenderName, Slice>): string[] {
  const lines = [
    '| contender | keys touched | keys alive at the end | used_memory growth | B per key alive | fill req/s | Redis CPU µs per new-key check | failed open, errors |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, s] of fills) {
    const t = total(s.nodes);
    lines.push(
      `| ${name} | ${int(s.requests)} | ${int(t.keys)} | ${f(t.usedMemory / 1024 ** 2)} MB | ${f(t.usedMemory / t.keys, 0)} | ${int(s.perSecond)} | ${f(t.cpuUs / s.checks, 2)} | ${s.failedOpen}, ${s.errors} |`,
    );
  }
  return lines;
}

/** The median of a contender's valid rounds, NaN when it has none. */
const median = (runs: Slice[] | undefined, pick: (s: Slice) => number) => med(valid(runs ?? []), pick).median;

/** Extrapolated, single server: what one primary core sustains at half load, and the source's example sized. */
function coreLines(mode: string, slices: Map<ContenderName, Slice[]>): string[] {
  const lines = [
    `Extrapolated from the ${mode} rounds (median Redis CPU per request of the valid rounds, taken as linear in the rate):`,
    '',
    '| contender | one core at half load, req/s | source example (50,000 req/s): cores busy | primaries at half load |',
    '|---|---|---|---|',
  ];
  for (const [name, runs] of slices) {
    const c = median(runs, cpuPerRequest);
    const cores = (SOURCE_RPS * c) / 1e6;
    lines.push(
      `| ${name} | ${int((HALF * 1e6) / c)} | ${f(cores, 2)} | ${Number.isFinite(c) ? Math.max(1, Math.ceil(cores / HALF)) : '–'} |`,
    );
  }
  // Two points (calls per request, CPU per request): CPU = perRequest + perCall * calls.
  const calls = (s: Slice) => total(s.nodes).scriptCalls / s.requests;
  const [x1, x2] = [median(slices.get('sluice'), calls), median(slices.get('sluice-uncoalesced'), calls)];
  const [y1, y2] = [
    median(slices.get('sluice'), cpuPerRequest),
    median(slices.get('sluice-uncoalesced'), cpuPerRequest),
  ];
  if ([x1, x2, y1, y2].every(Number.isFinite) && x2 - x1 > 0.2) {
    const perCall = (y2 - y1) / (x2 - x1);
    lines.push(
      '',
      `Sluice, the line through its two rows: Redis CPU per request ≈ ${f(y1 - perCall * x1, 2)} µs + ${f(perCall, 2)} µs per script call ` +
        `(calls per request ${f(x1, 3)} coalesced, ${f(x2, 3)} with coalesce: false).`,
    );
  }
  return lines;
}

/** Extrapolated, Cluster: per-key work spreads over the primaries, the hot keys' stays on one. */
function clusterLines(mode: string, slices: Map<ContenderName, Slice[]>): string[] {
  const lines = [
    `Extrapolated from the ${mode} rounds on 3 primaries: per primary, median Redis CPU per request (all requests). The busiest`,
    "primary's excess over the others' mean is taken as its hot keys' cost (the /search key, the Zipf head), which stays on one",
    'primary however many there are; the rest spreads evenly:',
    '',
    '| contender | per primary µs/request | hot keys µs/request | Cluster at half load of its busiest primary, req/s: 3 / 4 / 6 primaries |',
    '|---|---|---|---|',
  ];
  for (const [name, all] of slices) {
    const runs = valid(all);
    if (runs.length === 0) {
      lines.push(`| ${name} | no valid round | | |`);
      continue;
    }
    const perNode = runs[0]!.nodes.map((_, i) => med(runs, (s) => s.nodes[i]!.cpuUs / s.requests).median);
    const hot = Math.max(...perNode);
    const others = perNode.filter((_, i) => i !== perNode.indexOf(hot));
    const hotPart = Math.max(0, hot - others.reduce((a, b) => a + b, 0) / others.length);
    const evenPart = perNode.reduce((a, b) => a + b, 0) - hotPart;
    const at = (n: number) => int((HALF * 1e6) / (evenPart / n + hotPart));
    lines.push(
      `| ${name} | ${perNode.map((c) => f(c)).join(' / ')} | ${f(hotPart)} | ${at(3)} / ${at(4)} / ${at(6)} |`,
    );
  }
  return lines;
}

async function startTarget(
  kind: Target['kind'],
): Promise<{ target: Target; servers: RedisServer[]; stop(): Promise<void> }> {
  if (kind === 'single') {
    const server = await startRedis();
    return { target: { kind, ports: [server.port] }, servers: [server], stop: () => server.stop() };
  }
  const cluster = await startCluster(3);
  return {
    target: { kind, ports: cluster.nodes.map((n) => n.port) },
    servers: [...cluster.servers],
    stop: () => cluster.stop(),
  };
}

async function runTarget(
  kind: Target['kind'],
  report: string[],
  json: Record<string, unknown>,
): Promise<void> {
  const started = await startTarget(kind);
  const redis = await redisNodes(started.target.ports);
  const gateways = Array.from({ length: GATEWAYS }, () => new Gateway());
  try {
    await Promise.all(
      gateways.map((g) =>
        g.send({
          type: 'setup',
          target: started.target,
          contenders: NAMES,
          population: POPULATION,
          searchShare: SEARCH_SHARE,
          sluice: SLUICE,
        }),
      ),
    );
    const fillKeys = (name: ContenderName) =>
      kind === 'cluster' ? CLUSTER_FILL : name === 'sluice' ? KEYS : Math.min(KEYS, OTHERS_FILL);
    const fills = new Map<ContenderName, Slice>();
    for (const name of FILL ? NAMES : []) {
      console.error(`${kind}: filling ${int(fillKeys(name))} keys through ${name}`);
      fills.set(name, await fill(gateways, redis, name, fillKeys(name)));
    }
    report.push(
      `### ${kind === 'single' ? 'One redis-server' : 'Redis Cluster, 3 primaries'}`,
      '',
      ...(FILL ? [...fillTable(fills), ''] : []),
    );
    const t0 = Date.now();
    const modes: Record<string, Map<ContenderName, Slice[]>> = {};
    for (const mode of MODES) {
      let rate = (_: ContenderName) => 0;
      if (mode === 'fixed') {
        // Half the slowest contender's maximum, Sluice's diagnostic row (one call per request) left out.
        const max = [...(modes.max ?? new Map<ContenderName, Slice[]>())]
          .filter(([name]) => name !== 'sluice-uncoalesced')
          .map(([, runs]) => median(runs, (s) => s.perSecond))
          .filter(Number.isFinite);
        const total = RATE !== 'half' ? Number(RATE) : max.length > 0 ? HALF * Math.min(...max) : 5_000;
        rate = () => total / GATEWAYS;
        report.push(
          `Fixed rate: ${int(total)} req/s in all (${RATE === 'half' ? "half the slowest contender's" : 'given'}).`,
          '',
        );
      }
      console.error(`${kind}: ${mode} rounds`);
      const slices = await rounds(gateways, redis, t0, rate);
      modes[mode] = slices;
      report.push(
        `${mode === 'max' ? `As fast as ${IN_FLIGHT} requests in flight per gateway allow` : 'At the fixed rate'}:`,
        '',
      );
      report.push(...modeTable(slices), '');
      report.push(...(kind === 'single' ? coreLines(mode, slices) : clusterLines(mode, slices)), '');
    }
    json[kind] = {
      fills: Object.fromEntries(fills),
      modes: Object.fromEntries(Object.entries(modes).map(([m, s]) => [m, Object.fromEntries(s)])),
    };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
    redis.close();
    await started.stop();
  }
}

async function main(): Promise<void> {
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
  const population = new Population(POPULATION);
  const report = [
    `## capacity-scale, ${new Date().toISOString()}`,
    '',
    `${int(KEYS)} keys, ${int(ACTIVE)} active (sliding by ${int(ACTIVE)} every ${POPULATION.rotateMs / 1000} s), Zipf s=${POPULATION.zipf} ` +
      `(the hottest key ${f(100 * population.hottestShare(), 1)}% of requests); /search on ${f(100 * SEARCH_SHARE, 0)}% ` +
      `(${f(1 + SEARCH_SHARE, 2)} checks per request); ${GATEWAYS} gateway processes; ${ROUNDS} interleaved rounds of ${SECONDS} s ` +
      `after a ${WARM_SECONDS} s warm-up round; medians (min–max). Load average at the start: ${load}.`,
    '',
  ];
  const json: Record<string, unknown> = { args: Object.fromEntries(args), loadBefore: loadavg() };
  for (const kind of TARGETS) await runTarget(kind, report, json);
  report.push(
    `Load average at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}.`,
  );
  json.loadAfter = loadavg();
  console.log(report.join('\n'));
  const out = args.get('json');
  if (out) writeFileSync(out, JSON.stringify(json, null, 1));
}

await main();

/**
 * Regions at internet scale, on virtual time (issue 44): 10 regions × 100 gateways, each gateway a real limiter
 * with `regions` (its region's own MemoryStore, its link to one global store with the region's latency), one
 * `scope: global` rule, traffic split by region shares. Everything but time is the real mechanism: slices,
 * rounds, partition shares, charges. Per scenario: over-admission (the worst window above the limit),
 * utilisation (admitted / what could be), fairness between regions (Jain's index of each region's admitted
 * over its max-min fair share, and over its share in proportion to its demand), and calls to the global store
 * per request and per gateway per second.
 * Run: npx tsx bench/regions-sim.ts [--windows=15] [--gateways=100]
 */
import { globalRules, RegionWorld, type Tally } from '../test/support/regions-timeline.js';

const LIMIT = 20_000;
const WINDOW_MS = 1000;
const SYNC_MS = 200;
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const WINDOWS = arg('windows', 15);
const GATEWAYS = arg('gateways', 100);
/** Windows left out at the start: the counter's first (optimistic slices) and the shares settling. */
const WARMUP = 2;

/** Name, one-way latency to the global store (the link's answer time), share of the traffic. */
const REGIONS = [
  { name: 'us-east', latencyMs: 20, share: 0.3 },
  { name: 'us-west', latencyMs: 60, share: 0.2 },
  { name: 'eu-west', latencyMs: 80, share: 0.15 },
  { name: 'eu-central', latencyMs: 90, share: 0.1 },
  { name: 'ap-south', latencyMs: 150, share: 0.08 },
  { name: 'ap-northeast', latencyMs: 140, share: 0.06 },
  { name: 'sa-east', latencyMs: 120, share: 0.04 },
  { name: 'af-south', latencyMs: 150, share: 0.03 },
  { name: 'me-central', latencyMs: 110, share: 0.02 },
  { name: 'ap-southeast', latencyMs: 130, share: 0.02 },
];

const RULES = globalRules(LIMIT);

/** Max-min fair shares of `limit` between demands (water filling). */
function fairShares(demands: readonly number[], limit: number): number[] {
  const fair = demands.map(() => 0);
  let left = limit;
  let open = demands.map((_, i) => i);
  while (open.length > 0 && left > 0) {
    const each = left / open.length;
    const satisfied = open.filter((i) => demands[i]! - fair[i]! <= each);
    if (satisfied.length === 0) {
      for (const i of open) fair[i]! += each;
      break;
    }
    for (const i of satisfied) {
      left -= demands[i]! - fair[i]!;
      fair[i] = demands[i]!;
    }
    open = open.filter((i) => !satisfied.includes(i));
  }
  return fair;
}

/** Jain's fairness index of xs: 1 when all are equal. */
function jain(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const squares = xs.reduce((a, b) => a + b * b, 0);
  return (sum * sum) / (xs.length * squares);
}

interface Scenario {
  readonly name: string;
  /** Total demand per second, as a share of the limit. */
  readonly load: number;
  /** Called in the middle of each window (0-based): cut or mend a link, restart the global store. */
  readonly event?: (world: RegionWorld, window: number) => void;
}

interface Row {
  readonly scenario: string;
  readonly worstOver: number;
  readonly meanOver: number;
  readonly utilisation: number;
  readonly fairness: number;
  readonly proportional: number;
  readonly callsPerRequest: number;
  readonly callsPerGatewaySecond: number;
  readonly partitionedRatio?: number;
}

async function run(scenario: Scenario): Promise<Row> {
  const world = new RegionWorld({
    regions: REGIONS.map((r) => ({ name: r.name, latencyMs: r.latencyMs, gateways: GATEWAYS })),
    rules: RULES,
    syncMs: SYNC_MS,
  });
  const demand = REGIONS.map((r) => r.share * scenario.load * LIMIT);
  const fair = fairShares(demand, LIMIT);
  const totalDemand = demand.reduce((a, b) => a + b, 0);
  await world.toNextWindow(WINDOW_MS);
  const windows: Tally[][] = [];
  for (let w = 0; w < WINDOWS; w++) {
    const first = await world.traffic(demand, WINDOW_MS / 2, 10);
    scenario.event?.(world, w);
    const second = await world.traffic(demand, WINDOW_MS / 2, 10);
    windows.push(
      first.map((t, i) => {
        const u = second[i]!;
        return {
          admitted: t.admitted + u.admitted,
          denied: t.denied + u.denied,
          marked: t.marked + u.marked,
          globalCalls: t.globalCalls + u.globalCalls,
        };
      }),
    );
  }
  await world.close();
  const steady = windows.slice(WARMUP);
  const totals = steady.map((w) => w.reduce((s, t) => s + t.admitted, 0));
  const over = totals.map((t) => Math.max(0, t - LIMIT) / LIMIT);
  const sent = steady.map((w) => w.reduce((s, t) => s + t.admitted + t.denied, 0));
  const possible = sent.reduce((s, n) => s + Math.min(LIMIT, n), 0) / sent.length;
  const requests = steady.reduce((s, w) => s + w.reduce((x, t) => x + t.admitted + t.denied, 0), 0);
  const calls = steady.reduce((s, w) => s + w.reduce((x, t) => x + t.globalCalls, 0), 0);
  const clean = steady.filter((w) => w.every((t) => t.marked === 0));
  const perRegion = REGIONS.map((_, i) => clean.reduce((s, w) => s + w[i]!.admitted, 0) / clean.length);
  if (process.env.SIM_DETAIL)
    console.error(
      perRegion.map((a, i) => `${REGIONS[i]!.name} ${a.toFixed(0)}/${fair[i]!.toFixed(0)}`).join(', '),
    );
  const marked = steady.flatMap((w) => w.map((t, i) => ({ t, i }))).filter(({ t }) => t.marked > 0);
  return {
    scenario: scenario.name,
    worstOver: Math.max(...over),
    meanOver: over.reduce((a, b) => a + b, 0) / over.length,
    utilisation: totals.reduce((a, b) => a + b, 0) / totals.length / possible,
    fairness: jain(perRegion.map((a, i) => a / fair[i]!)),
    proportional: jain(perRegion.map((a, i) => a / (demand[i]! * Math.min(1, LIMIT / totalDemand)))),
    callsPerRequest: calls / requests,
    callsPerGatewaySecond: calls / (REGIONS.length * GATEWAYS) / steady.length,
    ...(marked.length === 0
      ? {}
      : {
          partitionedRatio: marked.reduce((s, { t, i }) => s + t.admitted / fair[i]!, 0) / marked.length,
        }),
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

const SCENARIOS: Scenario[] = [
  { name: 'below the limit (0.8×)', load: 0.8 },
  { name: 'overload (1.5×)', load: 1.5 },
  { name: 'overload (3×)', load: 3 },
  {
    name: 'eu-west cut off for 5 s (1.5×)',
    load: 1.5,
    event: (world, w) => {
      if (w === 5) world.links[2]!.down = true;
      if (w === 10) world.links[2]!.down = false;
    },
  },
  {
    name: 'global store restarted (1.5×)',
    load: 1.5,
    event: (world, w) => {
      if (w === 6) world.keys.restart();
    },
  },
];

console.log(
  `regions-sim: ${REGIONS.length} regions × ${GATEWAYS} gateways, limit ${LIMIT}/s (fixed_window 1 s), syncMs ${SYNC_MS}, ${WINDOWS} windows (${WARMUP} left out)`,
);
console.log(
  '| scenario | worst window over the limit | mean over | utilisation | fairness: max-min | fairness: by demand | global calls / request | global calls / gateway / s | partitioned region / fair share |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const scenario of SCENARIOS) {
  const started = performance.now();
  const row = await run(scenario);
  console.log(
    `| ${row.scenario} | ${pct(row.worstOver)} | ${pct(row.meanOver)} | ${pct(row.utilisation)} | ${row.fairness.toFixed(3)} | ${row.proportional.toFixed(3)} | ${row.callsPerRequest.toFixed(4)} | ${row.callsPerGatewaySecond.toFixed(2)} | ${row.partitionedRatio === undefined ? '-' : row.partitionedRatio.toFixed(2)} |`,
  );
  console.error(`  (${scenario.name}: ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

/**
 * One chart per algorithm of the registry, drawn from that algorithm's real decisions: a MemoryStore limiter
 * with an injected clock takes the same burst (BURST requests at once, then one every STEP_MS for DURATION_MS)
 * under the same limit, and each decision's allowed and remaining are plotted as a self-contained SVG.
 */
import { compileRules, createLimiter, type Decision, MemoryStore } from '@sluice/core';
import { ALGORITHM_NAMES, type AlgorithmName } from '../../packages/core/src/algorithms/index.js';

export const BURST = 20;
export const STEP_MS = 100;
export const DURATION_MS = 10_000;
/** The limit every counting algorithm gets: 10 requests a second (burst, where taken, defaults to 10). */
export const REQUESTS = 10;
/** The concurrency algorithm's limit, and how long each of its allowed requests is held before release. */
export const CONCURRENT = 5;
export const HOLD_MS = 250;

/** One request of the burst: when it came (ms from the start), and what the limiter said. */
export interface Point {
  readonly t: number;
  readonly allowed: boolean;
  readonly remaining: number;
}

/** The requests of the burst, in order: BURST at 0, then one each STEP_MS up to DURATION_MS. */
export function requestTimes(): number[] {
  const steps = Array.from({ length: DURATION_MS / STEP_MS }, (_, i) => (i + 1) * STEP_MS);
  return [...Array.from({ length: BURST }, () => 0), ...steps];
}

/** Runs the burst through `algorithm` and returns every decision. */
export async function simulate(algorithm: AlgorithmName): Promise<Point[]> {
  const start = Date.UTC(2026, 0, 1);
  let now = start;
  const limit = algorithm === 'concurrency' ? { concurrent: CONCURRENT } : { requests: REQUESTS, per: '1s' };
  const limiter = createLimiter({
    rules: compileRules({
      domain: 'chart',
      rules: [{ name: 'chart', key: [], global: true, algorithm, limit }],
    }),
    store: new MemoryStore(),
    clock: () => now,
  });
  // Concurrency leases are given back HOLD_MS after they were taken, before any request at or after that time.
  const held: { until: number; decision: Decision }[] = [];
  const points: Point[] = [];
  for (const t of requestTimes()) {
    while (held.length > 0 && (held[0]?.until ?? Infinity) <= t) {
      const lease = held.shift()!;
      now = start + lease.until;
      await limiter.release(lease.decision);
    }
    now = start + t;
    const decision = await limiter.check({});
    if (decision.allowed && algorithm === 'concurrency') held.push({ until: t + HOLD_MS, decision });
    points.push({ t, allowed: decision.allowed, remaining: decision.remaining });
  }
  await limiter.close();
  return points;
}

const WIDTH = 720;
const HEIGHT = 280;
const LEFT = 64;
const RIGHT = 16;
const TOP = 36;
const PLOT_BOTTOM = 180;
const STRIP_TOP = 206;
const STRIP_BOTTOM = 246;
const ALLOWED = '#2e7d32';
const DENIED = '#c62828';

const x = (t: number) => LEFT + (t / DURATION_MS) * (WIDTH - LEFT - RIGHT);

/** The chart of `points` as a self-contained SVG (no script, no external font or style). */
export function chartSvg(algorithm: string, points: readonly Point[]): string {
  // The scale is the limit (what `remaining` starts from), or more if an algorithm ever reports more.
  const limit = algorithm === 'concurrency' ? CONCURRENT : REQUESTS;
  const top = Math.max(limit, ...points.map((point) => point.remaining));
  const y = (remaining: number) => PLOT_BOTTOM - (remaining / top) * (PLOT_BOTTOM - TOP);
  const allowed = points.filter((point) => point.allowed).length;
  // Remaining as a step line: flat until the next decision.
  const steps = points
    .map((point, i) => {
      const next = points[i + 1]?.t ?? DURATION_MS;
      return `${x(point.t).toFixed(1)},${y(point.remaining).toFixed(1)} ${x(next).toFixed(1)},${y(point.remaining).toFixed(1)}`;
    })
    .join(' ');
  // Each request a tick in the strip: up and green when allowed, down and red when denied. The burst's requests,
  // all at 0, are fanned over the first few pixels so each one shows.
  const ticks = points
    .map((point, i) => {
      const at = (point.t === 0 ? x(0) + i * 0.8 : x(point.t)).toFixed(1);
      const middle = (STRIP_TOP + STRIP_BOTTOM) / 2;
      const [from, to] = point.allowed ? [middle, STRIP_TOP] : [middle, STRIP_BOTTOM];
      return `<line x1="${at}" y1="${from}" x2="${at}" y2="${to}" stroke="${point.allowed ? ALLOWED : DENIED}" data-t="${point.t}" data-allowed="${point.allowed}" data-remaining="${point.remaining}"/>`;
    })
    .join('\n    ');
  const seconds = Array.from({ length: DURATION_MS / 1000 + 1 }, (_, s) => s)
    .map(
      (s) =>
        `<line x1="${x(s * 1000)}" y1="${TOP}" x2="${x(s * 1000)}" y2="${STRIP_BOTTOM}" stroke="#ddd"/><text x="${x(s * 1000)}" y="${HEIGHT - 16}" text-anchor="middle">${s}s</text>`,
    )
    .join('\n    ');
  const title = `${algorithm}: ${BURST} requests at once, then one every ${STEP_MS} ms for ${DURATION_MS / 1000} s — ${allowed} of ${points.length} allowed`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="11" data-algorithm="${algorithm}" data-requests="${points.length}" data-allowed="${allowed}">
  <title>${title}</title>
  <rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>
  <text x="8" y="18"><tspan font-size="12" font-weight="bold">${algorithm}</tspan>${title.slice(algorithm.length)}</text>
  <g>
    ${seconds}
  </g>
  <text x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${top}</text>
  <text x="${LEFT - 6}" y="${PLOT_BOTTOM + 4}" text-anchor="end">0</text>
  <text x="${LEFT + 4}" y="${TOP + 12}" fill="#1565c0">remaining</text>
  <polyline points="${steps}" fill="none" stroke="#1565c0" stroke-width="1.5"/>
  <text x="${LEFT - 6}" y="${STRIP_TOP + 8}" text-anchor="end" fill="${ALLOWED}">allowed</text>
  <text x="${LEFT - 6}" y="${STRIP_BOTTOM}" text-anchor="end" fill="${DENIED}">denied</text>
  <g stroke-width="1.5">
    ${ticks}
  </g>
</svg>
`;
}

/** Every algorithm's chart, by name, in registry order. */
export async function algorithmCharts(): Promise<
  { algorithm: AlgorithmName; points: Point[]; svg: string }[]
> {
  const charts = [];
  for (const algorithm of ALGORITHM_NAMES) {
    const points = await simulate(algorithm);
    charts.push({ algorithm, points, svg: chartSvg(algorithm, points) });
  }
  return charts;
}

/** docs/reference/algorithms-charts.md: every chart, each with the counts it shows. */
export function chartsPage(charts: readonly { algorithm: string; points: readonly Point[] }[]): string {
  const sections = charts.map(({ algorithm, points }) => {
    const allowed = points.filter((point) => point.allowed).length;
    const inBurst = points.slice(0, BURST).filter((point) => point.allowed).length;
    return `## ${algorithm}

![${algorithm}: allowed and denied requests and remaining over 10 s](/charts/${algorithm}.svg)

Of the burst of ${BURST}, ${inBurst} allowed; ${allowed} of all ${points.length} requests allowed.
`;
  });
  return `<!-- Generated by scripts/docs/generate.ts from each algorithm's decisions (packages/core/src/algorithms): edit the source, not this page. -->

# Algorithms under one burst

Each chart is drawn when the site is built, from the real decisions of a limiter on a MemoryStore with an injected
clock: ${BURST} requests at once, then one every ${STEP_MS} ms for ${DURATION_MS / 1000} s, one global counter. Every
counting algorithm gets \`limit: {requests: ${REQUESTS}, per: 1s}\` (burst, where it applies, defaults to
${REQUESTS}); \`concurrency\` gets \`{concurrent: ${CONCURRENT}}\` with each allowed request held ${HOLD_MS} ms;
\`quota\` counts calendar periods (\`day\`, \`month\`) in practice and a 1 s period here. Above: what \`remaining\`
said after each decision; below: each request, up and green when allowed, down and red when denied.

${sections.join('\n')}`;
}

/**
 * CPU per request of core's HTTP layer alone, per revision, on compiled code:
 * `npx tsx --tsconfig bench/tsconfig.build.json bench/http-layer.ts [--revs=before:<rev>,after:<rev>] [--slices=30]
 * [--touch=KB]`.
 *
 * For each revision's build (lib/revision.ts), `createHttpLimiter(...).check(request, facts)` on the user-style
 * rules (per API key when `auth: api_key`, per IP when anonymous) against `limiter.decide(descriptors)` of the
 * same rules: the difference is what the HTTP layer adds (hooks, descriptors, verdict, RateLimit header text)
 * over the engine. 10,000 rotating API keys, MemoryStore, nothing ever denied. Slices of every revision and
 * both measurements run in turn; each figure is the median over slices (interquartile range), as this shared
 * machine drifts more between minutes than these figures differ.
 */
import { join } from 'node:path';
import { buildRevision, revisionsFrom } from './lib/revision.js';

const KEYS = 10_000;
const PER_SLICE = 50_000;
const limit = { requests: 1_000_000_000, per: '60000ms' };
const RULES = {
  domain: 'bench',
  rules: [
    { name: 'anon_per_ip', match: { auth: 'anonymous' }, key: ['ip'], limit },
    { name: 'key_default', match: { auth: 'api_key' }, key: ['api_key'], limit },
  ],
};

interface Core {
  compileRules(rules: unknown): unknown;
  createLimiter(options: { rules: unknown }): { decide(descriptors: Record<string, string>): unknown };
}
interface Http {
  createHttpLimiter(options: unknown, traits?: object): { check(req: object, facts: Facts): unknown };
}

/** What a Node adapter reads off a request: a class, as the adapters' are. */
class Facts {
  readonly ip = '127.0.0.1';
  readonly method = 'GET';
  readonly url = '/';
  readonly route = '/';
  readonly #key: string;
  constructor(key: string) {
    this.#key = key;
  }
  header(name: string): string | undefined {
    return name === 'x-api-key' ? this.#key : undefined;
  }
}

interface Measured {
  readonly name: string;
  readonly flow: (i: number) => unknown;
  readonly engine: (i: number) => unknown;
  readonly flowMicros: number[];
  readonly engineMicros: number[];
}

const value = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
const slices = Number(value('slices') ?? 30);
const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
const measured: Measured[] = [];
for (const { name, rev } of revisionsFrom(value('revs'))) {
  const dist = join(buildRevision(rev), 'packages/core/dist');
  const core = (await import(join(dist, 'index.js'))) as Core;
  const http = (await import(join(dist, 'http/index.js'))) as Http;
  const limiter = core.createLimiter({ rules: core.compileRules(RULES) });
  // As @sluice/fastify builds it (a revision without the trait ignores it).
  const flow = http.createHttpLimiter({ rules: RULES, logger: { warn() {} } }, { checksOnce: true });
  measured.push({
    name,
    flow: (i) => flow.check({}, new Facts(keys[i % KEYS] as string)),
    engine: (i) =>
      limiter.decide({
        ip: '127.0.0.1',
        method: 'GET',
        route: '/',
        api_key: keys[i % KEYS] as string,
        auth: 'api_key',
      }),
    flowMicros: [],
    engineMicros: [],
  });
}

const cpu = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
/** `--touch=KB`: that much other memory walked between calls, as a server's own work evicts the limiter's data from the CPU caches. */
const other = new Float64Array(Math.max(1, (Number(value('touch') ?? 0) * 1024) / 8));
let walked = 0;
function touch(): void {
  for (let i = 0; i < other.length; i += 8) walked += other[i]!;
}
function time(run: (i: number) => unknown): number {
  const touching = other.length > 1;
  const start = cpu();
  for (let i = 0; i < PER_SLICE; i++) {
    run(i);
    if (touching) touch();
  }
  return (cpu() - start) / PER_SLICE;
}

for (const m of measured) for (let warm = 0; warm < 3; warm++) time(m.flow) + time(m.engine);
for (let slice = 0; slice < slices; slice++) {
  for (let i = 0; i < measured.length; i++) {
    const m = measured[(i + slice) % measured.length] as Measured;
    m.flowMicros.push(time(m.flow));
    m.engineMicros.push(time(m.engine));
  }
}

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const at = (values: readonly number[], q: number) => sorted(values)[Math.floor(q * (values.length - 1))] ?? 0;
const show = (values: readonly number[]) =>
  `${at(values, 0.5).toFixed(2)} (${at(values, 0.25).toFixed(2)}–${at(values, 0.75).toFixed(2)})`;
console.log(
  `\nCPU µs per request, median over ${slices} slices of ${PER_SLICE} (interquartile range)${other.length > 1 ? `, ${other.length / 128} KB touched between calls (${walked === 0 ? 'zeros' : 'data'})` : ''}`,
);
console.log('| revision | through createHttpLimiter | limiter.decide alone | HTTP layer |');
console.log('|---|---|---|---|');
for (const m of measured) {
  const layer = m.flowMicros.map((micros, slice) => micros - (m.engineMicros[slice] ?? 0));
  console.log(`| ${m.name} | ${show(m.flowMicros)} | ${show(m.engineMicros)} | ${show(layer)} |`);
}

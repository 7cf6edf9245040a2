/**
 * What the heavy-hitter sketches (issue 45, `watch`) add per request on the memory path: `limiter.decide` on a
 * MemoryStore with the default `watch` (two Space-Saving sketches per rule, counts per rule and route) against
 * the same limiter with `watch: false`, in CPU µs per request.
 *
 *   npx tsx bench/hot-keys.ts [--rounds=9] [--ms=400] [--rules=1,2] [--keys=100000] [--deny]
 *
 * Each variant runs in its own process (one limiter per process, as in a server: the engine's code sees one
 * shape of its objects), both started alike, and measured in interleaved rounds (one round of each, the order
 * swapped every round); a round's figure is the median of 7 slices of CPU time after a full GC. The added cost is
 * taken per round (with minus without, the two measured side by side) and summarised as median (min-max): on a
 * shared machine the drift over a minute is as large as what is measured. The load: API keys drawn from a Zipf
 * law (s = 1.1) over `--keys` keys, a route of 8, on a virtual clock; limits high enough that every request is
 * allowed (`--deny`: 10 per minute, most requests denied, so the denial sketch works too). Each table of
 * `--rules` is measured in turn: 1, one rule keyed by API key (as bench/inprocess.ts); 2, that rule and one keyed
 * by API key and route, eight times the keys, a heavier tail: nearly every request of it takes a counter over.
 * `uptime` is printed before and after: figures from a loaded machine are preliminary.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { forkRoundWorker, median, perCpuSecond, type RoundWorker } from './lib/cpu-rounds.js';
import { rankOf, zipfTable } from './lib/population.js';

const REPO = resolve(import.meta.dirname, '..');
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** What the bench uses of `@sluice/core`. */
interface CoreModule {
  compileRules(spec: unknown): unknown;
  createLimiter(options: { rules: unknown; clock: () => number; watch?: false }): {
    decide(d: Record<string, string>): unknown;
    hotKeys(): unknown;
  };
}

/** `n` indices drawn from a Zipf law of exponent `s` over `universe` values, by a seeded generator. */
function zipfIndices(n: number, universe: number, s: number): Uint32Array {
  const table = zipfTable(universe, s);
  let x = 0x9e3779b9;
  const out = new Uint32Array(n);
  for (let j = 0; j < n; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[j] = rankOf(table, (x >>> 0) / 4294967296);
  }
  return out;
}

/** One process, one limiter (with or without the watch), measured round by round for the parent. */
async function worker(watched: boolean, ruleCount: number): Promise<void> {
  const core = (await import(pathToFileURL(join(REPO, 'packages/core/src/index.ts')).href)) as CoreModule;
  const keys = Number(arg('keys') ?? 100_000);
  const limit = process.argv.includes('--deny') ? 10 : 1_000_000;
  const rules = Array.from({ length: ruleCount }, (_, i) => ({
    name: `rule_${i}`,
    key: i % 2 === 0 ? ['api_key'] : ['api_key', 'route'],
    limit: { requests: limit, per: '60s' },
  }));
  let now = T0;
  const limiter = core.createLimiter({
    rules: core.compileRules({ domain: 'bench', rules }),
    clock: () => now,
    ...(watched ? {} : { watch: false as const }),
  });
  const draws = zipfIndices(1 << 20, keys, 1.1);
  const names = Array.from({ length: keys }, (_, i) => `key-${i}`);
  const routes = Array.from({ length: 8 }, (_, i) => `/route/${i}`);
  // Descriptor objects made once, as a server's are cheap next to the limiter: the limiter's cost is measured.
  const descriptors = Array.from({ length: 1 << 16 }, (_, j) => ({
    api_key: names[draws[j]!]!,
    route: routes[j & 7]!,
  }));
  let tick = 0;
  process.on('message', (message: { ms: number }) => {
    const run = perCpuSecond(
      message.ms,
      (i) => {
        now = T0 + Math.floor(i / 100);
        limiter.decide(descriptors[i & 0xffff]!);
      },
      tick,
    );
    tick = run.next;
    process.send!({ usPerRequest: 1e6 / run.rate });
  });
  if (watched && limiter.hotKeys() === undefined) throw new Error('the watch is off');
  process.send!({ ready: true });
}

/** A worker process: ask it for a round, get its µs per request. */
async function runner(watched: boolean, rules: number): Promise<RoundWorker<{ usPerRequest: number }>> {
  const passOn = process.argv.slice(2).filter((a) => a === '--deny' || a.startsWith('--keys'));
  const variant = watched ? 'with' : 'without';
  return forkRoundWorker(`${variant} the watch`, import.meta.filename, [
    `--worker=${variant}`,
    `--table=${rules}`,
    ...passOn,
  ]);
}

const range = (list: readonly number[], digits = 3) =>
  `${median(list).toFixed(digits)} (${Math.min(...list).toFixed(digits)} to ${Math.max(...list).toFixed(digits)})`;

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return '(uptime not available)';
  }
}

/** One table's rounds: µs per request without and with the watch, measured side by side. */
async function measure(
  rules: number,
  rounds: number,
  ms: number,
): Promise<{ bare: number[]; watched: number[] }> {
  const [without, withWatch] = [await runner(false, rules), await runner(true, rules)];
  const bare: number[] = [];
  const watched: number[] = [];
  try {
    await without.round(ms); // warm-up, not counted
    await withWatch.round(ms);
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        bare.push((await without.round(ms)).usPerRequest);
        watched.push((await withWatch.round(ms)).usPerRequest);
      } else {
        watched.push((await withWatch.round(ms)).usPerRequest);
        bare.push((await without.round(ms)).usPerRequest);
      }
    }
  } finally {
    without.stop();
    withWatch.stop();
  }
  return { bare, watched };
}

async function main(): Promise<void> {
  const rounds = Number(arg('rounds') ?? 9);
  const ms = Number(arg('ms') ?? 400);
  const tables = (arg('rules') ?? '1,2').split(',').map(Number);
  console.log(`uptime before: ${uptime()}`);
  const rows: string[] = [];
  for (const rules of tables) {
    const { bare, watched } = await measure(rules, rounds, ms);
    const added = watched.map((us, i) => us - bare[i]!);
    const table = rules === 1 ? '1 rule (api_key)' : `${rules} rules (api_key; api_key, route)`;
    rows.push(`| ${table} | ${range(bare)} | ${range(watched)} | ${range(added)} |`);
  }
  const load = process.argv.includes('--deny') ? 'most requests denied' : 'every request allowed';
  console.log(
    `limiter.decide on a MemoryStore, Zipf keys (${arg('keys') ?? 100_000}), ${load}; ` +
      `CPU µs per request, median (min to max) over ${rounds} interleaved rounds`,
  );
  console.log('| table | watch: false | watch (default) | added per request |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`uptime after: ${uptime()}`);
}

const role = arg('worker');
if (role !== undefined) await worker(role === 'with', Number(arg('table') ?? 1));
else await main();

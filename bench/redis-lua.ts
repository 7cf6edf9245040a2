/**
 * Redis CPU of @sluice/redis's Lua scripts per call and per check (issue 24): EVALSHA usec per call from INFO
 * commandstats (reset before each slice) on a private redis-server, at 1, 4 and 16 checks per call, for the
 * one-rule scripts (oneRuleScript.ts) and the general script (script.ts), the scripts of a revision (`before`:
 * its packages/redis/src, from `git archive`) against the working tree's (`after`), with @fastify/rate-limit's
 * script (INCR + PTTL/PEXPIRE, one key per call) as reference. Keys rotate over 10,000 tags and the limits are
 * wide: every check is allowed and writes, as on a busy server. Slices of each variant are interleaved, in an
 * order rotated per round; medians (min–max) over the rounds.
 * Three-rule rows (issue 24's common shape): each request a group of three checks of one algorithm (per key over
 * 10,000 tags, per tenant over 100, global; each rule its own wide limits), 1, 4 and 16 requests per call, the
 * working tree's general script (`general`) against its one-algorithm script (oneAlgorithmScript.ts).
 * `after / before` (`one algorithm / general`): the median over rounds of the ratio of the two slices of a round
 * (run next to each other).
 * Run: npx tsx bench/redis-lua.ts [--before=<rev>] [--rounds=15] [--calls=1000]
 *      [--algorithms=fixed_window,sliding_window,...] [--checks=1,4,16] [--three=fixed_window,sliding_window]
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startBenchRedis } from './lib/redis.js';
import { ROOT } from './lib/revision.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const BEFORE = args.get('before') ?? '50dbbfc';
const ROUNDS = Number(args.get('rounds') ?? 15);
const CALLS = Number(args.get('calls') ?? 1000);
const IN_FLIGHT = 32;
const CHECKS = (args.get('checks') ?? '1,4,16').split(',').map(Number);
const ALGORITHMS = (
  args.get('algorithms') ??
  'fixed_window,sliding_window,token_bucket,gcra,leaky_bucket,first_request_window,quota,sliding_log,concurrency'
).split(',');
/** The general script's row: each request one sliding_window check, as the one-rule rows, for comparison. */
const GENERAL = 'general (sliding_window)';
/** The algorithms of the three-rule rows ('' for none). */
const THREE = (args.get('three') ?? 'fixed_window,sliding_window').split(',').filter((name) => name !== '');
const TAGS = 10_000;
const TENANTS = 100;
const WIDE = { limit: 1_000_000_000, windowMs: 60_000, burst: 1_000_000_000 };
/** The three rules' limits: wide, and each rule its own (its own spec in the call), as in a real rule set. */
const THREE_RULES = [
  { rule: 'key', params: WIDE, tag: (n: number) => `k${(n % TAGS).toString(36).padStart(10, '0')}` },
  {
    rule: 'tenant',
    params: { ...WIDE, limit: 2 * WIDE.limit, burst: 2 * WIDE.burst },
    tag: (n: number) => `t${n % TENANTS}`,
  },
  { rule: 'global', params: { ...WIDE, limit: 4 * WIDE.limit, burst: 4 * WIDE.burst }, tag: () => 'all' },
];

interface Script {
  lua: string;
  sha: string;
}
type Argv = (string | number)[];
/** What the bench uses of a revision's packages/redis/src. */
interface Scripts {
  oneRuleScript(algorithm: unknown): Script;
  oneRuleArgv(groups: unknown[], algorithm: unknown, settings: unknown): Argv;
  luaAlgorithms: Record<string, unknown>;
  EVALUATE_SCRIPT: string;
  evaluateArgv(groups: unknown[], settings: unknown): Argv;
  /** The working tree's only (oneAlgorithmScript.ts). */
  oneAlgorithmScript?(algorithm: unknown): Script;
  oneAlgorithmArgv?(groups: unknown[], algorithm: unknown, settings: unknown): Argv;
}

async function scriptsOf(dir: string): Promise<Scripts> {
  const src = join(dir, 'packages/redis/src');
  const one = (await import(join(src, 'oneRuleScript.ts'))) as Pick<Scripts, 'oneRuleScript' | 'oneRuleArgv'>;
  const algorithms = (await import(join(src, 'algorithms/index.ts'))) as Pick<Scripts, 'luaAlgorithms'>;
  const script = (await import(join(src, 'script.ts'))) as Pick<Scripts, 'EVALUATE_SCRIPT'>;
  const call = (await import(join(src, 'scriptCall.ts'))) as Pick<Scripts, 'evaluateArgv'>;
  const all = existsSync(join(src, 'oneAlgorithmScript.ts'))
    ? ((await import(join(src, 'oneAlgorithmScript.ts'))) as Pick<
        Scripts,
        'oneAlgorithmScript' | 'oneAlgorithmArgv'
      >)
    : {};
  return { ...one, ...algorithms, ...script, ...call, ...all };
}

/** The revision's packages/redis/src in a temporary directory, resolving packages as the tree does. */
function checkout(rev: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-lua-'));
  execSync(`git archive ${rev} packages/redis/src | tar -x -C ${dir}`, { cwd: ROOT });
  symlinkSync(join(ROOT, 'packages/redis/node_modules'), join(dir, 'packages/redis/node_modules'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** @fastify/rate-limit's script text (its RedisStore keeps it in a module constant: read from the file). */
function fastifyLua(): string {
  const require = createRequire(join(ROOT, 'bench/package.json'));
  const file = require.resolve('@fastify/rate-limit/store/RedisStore.js');
  const text = readFileSync(file, 'utf8');
  const lua = /const lua = `([\s\S]*?)`/.exec(text)?.[1];
  if (lua === undefined) throw new Error(`no script in ${file}`);
  return lua;
}

interface Variant {
  name: string;
  /** The SHA and argv of the call with `checks` checks, the `call`-th of the slice. */
  call(checks: number, call: number): [string, Argv];
}

function checksOf(algorithm: string, first: number, count: number, period: string | undefined) {
  const params = period === undefined ? WIDE : { ...WIDE, period };
  return Array.from({ length: count }, (_, i) => ({
    checks: [
      {
        rule: 'r',
        tag: `k${((first + i) % TAGS).toString(36).padStart(10, '0')}`,
        algorithm,
        params,
        cost: 1,
        mode: 'enforce' as const,
        leaseId: algorithm === 'concurrency' ? `l${first + i}` : undefined,
      },
    ],
    now: Date.now(),
  }));
}

/** `count` requests of the three-rule shape from the `first`-th: per key, per tenant, global. */
function threeRuleGroups(algorithm: string, first: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    checks: THREE_RULES.map(({ rule, params, tag }) => ({
      rule,
      tag: tag(first + i),
      algorithm,
      params,
      cost: 1,
      mode: 'enforce' as const,
    })),
    now: Date.now(),
  }));
}

const SETTINGS = { prefix: 'bench', redisClock: false };

/** The three-rule rows' variants: the general script, then the one-algorithm script, both the working tree's. */
async function threeRuleVariants(admin: Redis, scripts: Scripts, algorithm: string): Promise<Variant[]> {
  const { oneAlgorithmScript, oneAlgorithmArgv } = scripts;
  if (oneAlgorithmScript === undefined || oneAlgorithmArgv === undefined)
    throw new Error('no oneAlgorithmScript.ts');
  const general = (await admin.script('LOAD', scripts.EVALUATE_SCRIPT)) as string;
  const lua = scripts.luaAlgorithms[algorithm];
  const lean = oneAlgorithmScript(lua);
  await admin.script('LOAD', lean.lua);
  return [
    {
      name: 'general',
      call: (requests, call) => [
        general,
        scripts.evaluateArgv(threeRuleGroups(algorithm, call * requests, requests), SETTINGS),
      ],
    },
    {
      name: 'one algorithm',
      call: (requests, call) => [
        lean.sha,
        oneAlgorithmArgv(threeRuleGroups(algorithm, call * requests, requests), lua, SETTINGS),
      ],
    },
  ];
}

async function variantsOf(admin: Redis, scripts: Scripts, name: string, algorithm: string): Promise<Variant> {
  if (algorithm === GENERAL) {
    const sha = (await admin.script('LOAD', scripts.EVALUATE_SCRIPT)) as string;
    return {
      name,
      call: (checks, call) => [
        sha,
        scripts.evaluateArgv(checksOf('sliding_window', call * checks, checks, undefined), SETTINGS),
      ],
    };
  }
  const lua = scripts.luaAlgorithms[algorithm];
  const script = scripts.oneRuleScript(lua);
  await admin.script('LOAD', script.lua);
  // A calendar quota: the call's own calendar arithmetic, not a window's.
  const period = algorithm === 'quota' ? 'month' : undefined;
  return {
    name,
    call: (checks, call) => [
      script.sha,
      scripts.oneRuleArgv(checksOf(algorithm, call * checks, checks, period), lua, SETTINGS),
    ],
  };
}

/** EVALSHA usec per call over CALLS calls, IN_FLIGHT at a time. */
async function slice(admin: Redis, variant: Variant, checks: number, offset: number): Promise<number> {
  await admin.config('RESETSTAT');
  let next = 0;
  const worker = async () => {
    while (next < CALLS) {
      const [sha, argv] = variant.call(checks, offset + next++);
      await admin.evalsha(sha, ...(argv as [number, ...string[]]));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const stats = await admin.info('commandstats');
  const found = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(stats);
  if (found === null || Number(found[1]) !== CALLS) throw new Error(`EVALSHA not counted: ${stats}`);
  return Number(found[2]) / CALLS;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const spread = (values: number[]) =>
  `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;

async function main(): Promise<void> {
  const dir = checkout(BEFORE);
  const redis = await startBenchRedis();
  try {
    const before = await scriptsOf(dir);
    const after = await scriptsOf(ROOT);
    const fastifySha = (await redis.admin.script('LOAD', fastifyLua())) as string;
    const fastify: Variant = {
      name: '@fastify/rate-limit',
      call: (_checks, call) => [
        fastifySha,
        [1, `fastify-rate-limit-k${(call % TAGS).toString(36)}`, WIDE.windowMs, WIDE.limit, 'false', 'false'],
      ],
    };
    /** checks: checks per request (3 for the three-rule rows), for the per-check column. */
    const rows: { algorithm: string; variants: Variant[]; checks: number }[] = [];
    for (const algorithm of [...ALGORITHMS, GENERAL]) {
      rows.push({
        algorithm,
        checks: 1,
        variants: [
          await variantsOf(redis.admin, before, 'before', algorithm),
          await variantsOf(redis.admin, after, 'after', algorithm),
        ],
      });
    }
    for (const algorithm of THREE) {
      rows.push({
        algorithm: `three rules (${algorithm})`,
        checks: 3,
        variants: await threeRuleVariants(redis.admin, after, algorithm),
      });
    }
    rows.push({ algorithm: 'reference', checks: 1, variants: [fastify] });
    const samples = new Map<string, number[]>();
    // Round 0 fills the keys and warms up; it is not reported.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const { algorithm, variants } of rows) {
        for (const checks of algorithm === 'reference' ? [1] : CHECKS) {
          for (let v = 0; v < variants.length; v++) {
            const variant = variants[(v + round) % variants.length]!;
            const usec = await slice(redis.admin, variant, checks, 0);
            const id = `${algorithm}|${variant.name}|${checks}`;
            if (round > 0) samples.set(id, [...(samples.get(id) ?? []), usec]);
          }
        }
      }
      process.stderr.write(`round ${round} done\n`);
    }
    console.log(
      `redis-server ${await redis.version()}, ${ROUNDS} rounds of ${CALLS} calls (${IN_FLIGHT} in flight), ` +
        `${TAGS} keys, before = ${BEFORE}. EVALSHA µs per call, and per check; medians (min–max)\n`,
    );
    // A column is a number of requests per call: one check each, three in the three-rule rows.
    const header = CHECKS.map((c) => `${c} request${c > 1 ? 's' : ''}: per call / per check`);
    console.log(`| script | ${header.join(' | ')} |`);
    console.log(`|---|${CHECKS.map(() => '---').join('|')}|`);
    const values = (algorithm: string, name: string, requests: number) =>
      samples.get(`${algorithm}|${name}|${requests}`)!;
    for (const { algorithm, variants, checks: perRequest } of rows) {
      const label = (name: string) => (algorithm === 'reference' ? name : `${algorithm}, ${name}`);
      for (const variant of variants) {
        const cells = (algorithm === 'reference' ? [1] : CHECKS).map((requests) => {
          const all = values(algorithm, variant.name, requests);
          return `${spread(all)} / ${(median(all) / (requests * perRequest)).toFixed(1)}`;
        });
        console.log(`| ${label(variant.name)} | ${cells.join(' | ')} |`);
      }
      if (variants.length === 2) {
        const [first, second] = variants.map((variant) => variant.name) as [string, string];
        const ratios = CHECKS.map((requests) => {
          const before = values(algorithm, first, requests);
          const after = values(algorithm, second, requests);
          return `${median(after.map((a, i) => a / before[i]!)).toFixed(2)}×`;
        });
        console.log(`| ${label(`${second} / ${first}`)} | ${ratios.join(' | ')} |`);
      }
    }
  } finally {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

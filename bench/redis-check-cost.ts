/**
 * The cost of one rule's check on RedisStore, per revision side by side: Redis script time per call (INFO
 * commandstats usec_per_call of EVALSHA), Redis CPU per evaluate() (INFO cpu) and this process's CPU per
 * evaluate() (process.cpuUsage), for one request at a time (every call a single check: the lean path) and for
 * 32 in flight (coalesced turns). Each revision's core and redis packages are built from a copy of the tree
 * (`work` = the working tree as it is now, uncommitted changes included) and run compiled, on one private
 * redis-server, in interleaved slices (rotated order per round), so that the machine's drift hits them alike.
 * Run: npx tsx bench/redis-check-cost.ts --revs=before:<rev>,after:work [--rounds=5] [--calls=20000]
 *      [--algorithm=sliding_window] [--rules=1]
 * `--rules=3`: each request checks three rules (per key, per tenant, global), so the general script runs
 * instead of the lean one-rule script.
 */
import { execFileSync, execSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ready, startRedis } from '../test/support/redis.js';
import { ROOT } from './lib/revision.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value];
  }),
);
const ROUNDS = Number(args.get('rounds') ?? 5);
const CALLS = Number(args.get('calls') ?? 20_000);
const ALGORITHM = args.get('algorithm') ?? 'sliding_window';
const RULES = Number(args.get('rules') ?? 1);
const KEYS = 10_000;
const WIDE = { limit: 1_000_000_000, windowMs: 60_000, burst: 1_000_000_000 };
/** Tags as tagFor() makes them (base64url), 10,000 rotating keys. */
const TAGS = Array.from({ length: KEYS }, (_, i) => `k${i.toString(36).padStart(10, '0')}`);
const PACKAGES = ['core', 'redis'] as const;

interface Check {
  rule: string;
  tag: string;
  algorithm: string;
  params: typeof WIDE;
  cost: number;
  mode: 'enforce';
}
interface Store {
  evaluate(checks: Check[], now: number): Promise<unknown>;
  close(): Promise<void>;
}
type StoreClass = new (options: Record<string, unknown>) => Store;

/** A copy of core and redis at `rev` ('work': the working tree), built; the path of its redis package. */
function build(rev: string): string {
  const label =
    rev === 'work'
      ? 'work'
      : execFileSync('git', ['rev-parse', '--short=12', rev], { cwd: ROOT }).toString().trim();
  const dir =
    rev === 'work'
      ? mkdtempSync(join(tmpdir(), 'sluice-check-cost-work-'))
      : join(tmpdir(), `sluice-check-cost-${label}`);
  if (rev !== 'work' && existsSync(join(dir, 'packages/redis/dist/index.js')))
    return join(dir, 'packages/redis');
  mkdirSync(dir, { recursive: true });
  const files = ['package.json', 'tsconfig.base.json', 'scripts', ...PACKAGES.map((p) => `packages/${p}`)];
  if (rev === 'work') {
    for (const file of files)
      cpSync(join(ROOT, file), join(dir, file), {
        recursive: true,
        filter: (source) => !source.includes('node_modules') && !source.endsWith('/dist'),
      });
  } else {
    execSync(`git archive ${label} ${files.join(' ')} | tar -x -C ${dir}`, { cwd: ROOT });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const name of PACKAGES) {
    const modules = join(ROOT, 'packages', name, 'node_modules');
    if (existsSync(modules))
      cpSync(modules, join(dir, 'packages', name, 'node_modules'), {
        recursive: true,
        verbatimSymlinks: true,
      });
    execFileSync(process.execPath, [join(dir, 'scripts/build-package.mjs')], {
      cwd: join(dir, 'packages', name),
      stdio: 'inherit',
    });
  }
  return join(dir, 'packages/redis');
}

interface Sample {
  nodeUs: number;
  redisUs: number;
  scriptUsecPerCall: number;
  callsPerEvaluate: number;
}

async function stats(admin: Redis): Promise<{ cpu: number; calls: number; usec: number }> {
  const [cpu, commands] = await Promise.all([admin.info('cpu'), admin.info('commandstats')]);
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(cpu)?.[1]);
  const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(commands);
  return {
    cpu: read('used_cpu_user') + read('used_cpu_sys'),
    calls: Number(evalsha?.[1] ?? 0),
    usec: Number(evalsha?.[2] ?? 0),
  };
}

/** Rule names and how many tags each rotates through: a key per client, fewer tenants, one global key. */
const RULE_KEYS: [string, number][] = [
  ['per_key', KEYS],
  ['per_tenant', 100],
  ['global', 1],
];

/** The checks of request i: RULES rules of RULE_KEYS, each on its own tag. */
function checksOf(i: number): Check[] {
  return RULE_KEYS.slice(0, RULES).map(([rule, keys]) => ({
    rule,
    tag: TAGS[i % keys]!,
    algorithm: ALGORITHM,
    params: WIDE,
    cost: 1,
    mode: 'enforce',
  }));
}

/** CALLS evaluations of RULES checks each, `inFlight` at a time. */
async function slice(store: Store, admin: Redis, inFlight: number, offset: number): Promise<Sample> {
  const before = await stats(admin);
  let next = 0;
  const worker = async () => {
    while (next < CALLS) {
      const i = offset + next++;
      await store.evaluate(checksOf(i), Date.now());
    }
  };
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(cpu);
  const after = await stats(admin);
  const calls = after.calls - before.calls;
  return {
    nodeUs: (used.user + used.system) / CALLS,
    redisUs: ((after.cpu - before.cpu) * 1e6) / CALLS,
    scriptUsecPerCall: (after.usec - before.usec) / calls,
    callsPerEvaluate: calls / CALLS,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const spread = (values: number[], digits = 2) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

async function main(): Promise<void> {
  const revisions = (args.get('revs') ?? 'work:work').split(',').map((pair) => {
    const [name = '', rev = ''] = pair.split(':');
    return { name, rev };
  });
  const stores: Store[] = [];
  const server = await startRedis();
  const admin = new Redis({ host: server.host, port: server.port });
  const clients: Redis[] = [admin];
  try {
    for (const { rev } of revisions) {
      const redis = (await import(join(build(rev), 'dist/index.js'))) as {
        RedisStore: StoreClass;
        recommendedRedisOptions: Record<string, unknown>;
      };
      const client = new Redis({ host: server.host, port: server.port, ...redis.recommendedRedisOptions });
      clients.push(client);
      stores.push(new redis.RedisStore({ client, prefix: 'bench', timeoutMs: 10_000, breaker: false }));
    }
    await Promise.all(clients.map(ready));
    const modes = [1, 32];
    const results = revisions.map(() => modes.map((): Sample[] => []));
    // Round 0 warms the JIT and the script cache up and is not reported.
    for (let round = 0; round <= ROUNDS; round++) {
      for (let m = 0; m < modes.length; m++) {
        for (let k = 0; k < revisions.length; k++) {
          const r = (round + k) % revisions.length;
          const sample = await slice(stores[r]!, admin, modes[m]!, round * CALLS);
          if (round > 0) results[r]![m]!.push(sample);
        }
      }
    }
    const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1];
    console.log(
      `redis-server ${version}, Node ${process.version}, ${ALGORITHM}, ${RULES} check(s) per request, ${KEYS} keys`,
    );
    modes.forEach((inFlight, m) => {
      console.log(`\n${inFlight} in flight, ${ROUNDS} rounds of ${CALLS} evaluations: medians (min–max)`);
      console.table(
        revisions.map(({ name }, r) => {
          const samples = results[r]![m]!;
          return {
            revision: name,
            'script µs/call (commandstats)': spread(samples.map((s) => s.scriptUsecPerCall)),
            'Redis CPU µs/eval': spread(samples.map((s) => s.redisUs)),
            'Node CPU µs/eval': spread(samples.map((s) => s.nodeUs)),
            'calls/eval': median(samples.map((s) => s.callsPerEvaluate)).toFixed(3),
          };
        }),
      );
    });
  } finally {
    for (const store of stores) await store.close();
    for (const client of clients) client.disconnect();
    await server.stop();
  }
}

await main();

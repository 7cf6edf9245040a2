/**
 * Sluice on PostgreSQL (PostgresStore) against rate-limiter-flexible's RateLimiterPostgres, through Fastify, in one
 * run: checks per second, server CPU µs per request, round trips and transactions per request, one rule (10,000
 * rotating API keys) and three rules (per key, per tenant, global); then every contender at a fixed rate, half of
 * the slower one's maximum, for the p99 each adds over Fastify with no limiter.
 *
 * A private PostgreSQL on a free loopback port (never 5432) and the load generator run on CPU 1, each server under
 * test on CPU 0 (taskset); contenders are measured round-robin, each round starting with another one.
 * Run: npx tsx bench/postgres.ts [--rounds=5] [--duration=5] [--sets=one,three]
 * The same file is the server child: compiled by esbuild to bench/dist/postgres.js (plain JavaScript, as users run
 * Sluice: no tsx wrapper around every closure) and started with BENCH_PG_SPEC.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';

type Contender = 'none' | 'sluice' | 'sluice-lease' | 'rlflex';
type RuleSet = 'one' | 'three';

interface PgSpec {
  readonly contender: Contender;
  readonly rules: RuleSet;
  readonly url: string;
  readonly prefix: string;
}

/** What a server child reports: requests begun, its CPU, and its traffic with PostgreSQL. */
interface PgStats {
  readonly requests: number;
  readonly cpuMicros: number;
  /** ReadyForQuery messages: one per round trip. */
  readonly roundTrips: number;
  /** ReadyForQuery with status idle: a transaction (or an autocommit statement) ended. */
  readonly transactions: number;
  readonly failedOpen: number;
  readonly errors: number;
}

const NEVER_REACHED = 1_000_000_000;
const WINDOW_MS = 60_000;
/** Both contenders get the pool a connection string gives PostgresStore, or `--pool=N`. */
const POOL_SIZE = Number(process.env.BENCH_PG_POOL ?? 10);
/**
 * The peer waits for the database however long it takes; Sluice's 100 ms default (then on_store_error) is for
 * production. On this shared 2-CPU machine a neighbour's burst stalls PostgreSQL for hundreds of ms, which would
 * make a run invalid rather than slow: 2 s, and what still fails open is counted.
 */
const BENCH_TIMEOUT_MS = 2000;
const CONNECTIONS = 32;

// ---------------------------------------------------------------- the server child

class Traffic {
  requests = 0;
  roundTrips = 0;
  transactions = 0;
  failedOpen = 0;
  errors = 0;

  /** Counts the ReadyForQuery messages of every connection the pool opens. */
  watch(pool: pg.Pool): pg.Pool {
    pool.on('connect', (client) => {
      const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
      connection.on('readyForQuery', (message: { status?: string }) => {
        this.roundTrips += 1;
        if (message.status === 'I') this.transactions += 1;
      });
    });
    return pool;
  }

  snapshot(): PgStats {
    const cpu = process.cpuUsage();
    const { requests, roundTrips, transactions, failedOpen, errors } = this;
    return { requests, cpuMicros: cpu.user + cpu.system, roundTrips, transactions, failedOpen, errors };
  }
}

function header(value: string | string[] | undefined): string {
  return typeof value === 'string' ? value : (value?.[0] ?? '');
}

function sluiceRules(spec: PgSpec) {
  const limit = { requests: NEVER_REACHED, per: `${WINDOW_MS}ms` };
  const perKey = { name: 'per_key', key: ['api_key'], limit };
  if (spec.rules === 'one') return { domain: 'bench', rules: [perKey] };
  // sluice-lease: the global rule takes 100 units per transaction (the README's advice for a hot row).
  const lease = spec.contender === 'sluice-lease' ? { lease: { batch: 100 } } : {};
  return {
    domain: 'bench',
    rules: [
      perKey,
      { name: 'per_tenant', key: ['tenant'], limit },
      { name: 'everyone', global: true, key: [], limit, ...lease },
    ],
  };
}

/** The contenders' modules, loaded by the server child only (the run itself needs none of them). */
const contenders = {
  fastify: () => import('@sluice/fastify'),
  postgres: () => import('@sluice/postgres'),
  flexible: () => import('rate-limiter-flexible'),
};

async function sluiceApp(app: FastifyInstance, spec: PgSpec, pool: pg.Pool, traffic: Traffic): Promise<void> {
  const { rateLimit } = await contenders.fastify();
  const { PostgresStore } = await contenders.postgres();
  const store = new PostgresStore({
    pool,
    tablePrefix: spec.prefix,
    createTable: true,
    timeoutMs: BENCH_TIMEOUT_MS,
    sweepEveryMs: false,
    logger: { warn: () => {} },
  });
  await app.register(rateLimit, {
    rules: sluiceRules(spec),
    store,
    logger: { warn: () => {} },
    observer: {
      onDecision: (decision) => {
        if (decision.failedOpen) traffic.failedOpen += 1;
      },
      onStoreError: () => {
        traffic.errors += 1;
      },
    },
    ...(spec.rules === 'three'
      ? {
          descriptors: (req: { headers: Record<string, string | string[] | undefined> }) => ({
            tenant: header(req.headers['x-tenant']),
          }),
        }
      : {}),
  });
}

/** The peer stacks one limiter per rule, as its documentation shows, each consumed in turn. */
async function peerApp(app: FastifyInstance, spec: PgSpec, pool: pg.Pool, traffic: Traffic): Promise<void> {
  const { RateLimiterPostgres } = await contenders.flexible();
  const options = {
    storeClient: pool,
    tableName: `${spec.prefix}rlflex`,
    points: NEVER_REACHED,
    duration: WINDOW_MS / 1000,
  };
  const make = (keyPrefix: string) =>
    new Promise<InstanceType<typeof RateLimiterPostgres>>((resolve, reject) => {
      const limiter: InstanceType<typeof RateLimiterPostgres> = new RateLimiterPostgres(
        { ...options, keyPrefix },
        (error?: Error) => (error ? reject(error) : resolve(limiter)),
      );
    });
  const perKey = await make('k');
  const layers = spec.rules === 'one' ? [] : [await make('t'), await make('g')];
  app.addHook('onRequest', async (req, reply) => {
    try {
      await perKey.consume(header(req.headers['x-api-key']));
      if (layers.length > 0) {
        await layers[0]!.consume(header(req.headers['x-tenant']));
        await layers[1]!.consume('g');
      }
    } catch (error) {
      traffic.errors += 1;
      void reply.code(error instanceof Error ? 500 : 429);
    }
  });
}

async function serve(spec: PgSpec): Promise<void> {
  const traffic = new Traffic();
  const pool = traffic.watch(new pg.Pool({ connectionString: spec.url, max: POOL_SIZE }));
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  if (spec.contender === 'rlflex') await peerApp(app, spec, pool, traffic);
  else if (spec.contender !== 'none') await sluiceApp(app, spec, pool, traffic);
  app.get('/', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  app.server.on('request', () => {
    traffic.requests += 1;
  });
  process.on('message', (message) => {
    if (message === 'stats') process.send?.({ type: 'stats', stats: traffic.snapshot() });
  });
  process.on('disconnect', () => process.exit(0));
  process.on('SIGINT', () => process.exit(0));
  process.send?.({ type: 'ready', port: (app.server.address() as AddressInfo).port });
}

// ---------------------------------------------------------------- the run

interface Sample {
  readonly contender: Contender;
  readonly rules: RuleSet;
  readonly rps: number;
  readonly p99: number;
  readonly cpuUsPerReq: number;
  /** CPU of the PostgreSQL server (postmaster and backends) per request, µs. */
  readonly dbUsPerReq: number;
  readonly tripsPerReq: number;
  readonly txPerReq: number;
  readonly invalid: boolean;
  readonly failedOpen: number;
}

function argsOf(): Map<string, string> {
  return new Map(
    process.argv.slice(2).map((arg) => {
      const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
      return [name, value];
    }),
  );
}

/** This file as plain JavaScript in bench/dist (TypeScript's transpiler: types erased, nothing wrapped). */
async function compileSelf(): Promise<string> {
  const { default: ts } = await import('typescript');
  const { readFileSync, writeFileSync, mkdirSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const out = fileURLToPath(new URL('./dist/postgres.js', import.meta.url));
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  mkdirSync(fileURLToPath(new URL('./dist/', import.meta.url)), { recursive: true });
  writeFileSync(out, outputText);
  return out;
}

/** The bench's own load generator into bench/dist, the packages left as built. */
async function buildBenchOnly(): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [tsc, '-p', 'bench/tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

/**
 * CPU time of the PostgreSQL server so far, µs: the postmaster's own and its reaped children's, and every live
 * backend's (from /proc/<pid>/stat, in clock ticks).
 */
async function databaseCpuMicros(pid: number, ticks: number): Promise<number> {
  const { execFileSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const fields = (target: string) => {
    try {
      const stat = readFileSync(`/proc/${target}/stat`, 'utf8');
      // After the command name in parentheses: state is field 3, utime 14, stime 15, cutime 16, cstime 17.
      return stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
    } catch {
      return undefined; // a backend that ended meanwhile
    }
  };
  let total = 0;
  const own = fields(String(pid));
  if (own !== undefined) total += own[11]! + own[12]! + own[13]! + own[14]!;
  let children: string[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n');
  } catch {}
  for (const child of children.filter(Boolean)) {
    const stat = fields(child);
    if (stat !== undefined) total += stat[11]! + stat[12]!;
  }
  return (total * 1_000_000) / ticks;
}

/** Moves the postmaster and every process it started to `cpu`; backends forked later inherit it. */
async function pinServer(pid: number, cpu: number): Promise<void> {
  const { execFileSync } = await import('node:child_process');
  const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .trim()
    .split('\n');
  for (const target of [String(pid), ...children.filter(Boolean)]) {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), target], { stdio: 'ignore' });
  }
}

async function main(): Promise<void> {
  const args = argsOf();
  const rounds = Number(args.get('rounds') ?? 5);
  const durationS = Number(args.get('duration') ?? 5);
  const sets = (args.get('sets') ?? 'one,three').split(',') as RuleSet[];
  // The server children read it from the environment they inherit.
  if (args.has('pool')) process.env.BENCH_PG_POOL = args.get('pool');
  const { buildForBench } = await import('./lib/build.js');
  const { startLoad, LOAD_CPU, SERVER_CPU } = await import('./lib/children.js');
  const { spread, showSpread, rotate } = await import('./lib/stats.js');
  const { startPostgres } = await import('../test/support/postgres.js');
  const { execFileSync, spawn } = await import('node:child_process');
  const { join } = await import('node:path');
  const { fileURLToPath } = await import('node:url');

  // --no-build: the packages' dists as they are (another engineer's half-made edit may not compile right now).
  if (args.has('no-build')) await buildBenchOnly();
  else {
    buildForBench();
    execFileSync(
      process.execPath,
      [join(fileURLToPath(new URL('..', import.meta.url)), 'scripts/build-package.mjs')],
      {
        cwd: fileURLToPath(new URL('../packages/postgres', import.meta.url)),
        stdio: 'inherit',
      },
    );
  }
  const script = await compileSelf();
  const database = await startPostgres();
  await pinServer(database.pid, LOAD_CPU);
  const load = startLoad();
  const admin = new pg.Pool({ connectionString: database.url, max: 1 });
  const version = (await admin.query('SHOW server_version')).rows[0].server_version as string;
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const databaseCpu = () => databaseCpuMicros(database.pid, ticks);

  /** One server child on the server CPU, through IPC as lib/children.ts does for the main bench. */
  async function startServer(spec: PgSpec, nodeFlags: readonly string[] = []) {
    const child = spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, ...nodeFlags, script], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_PG_SPEC: JSON.stringify(spec) },
    });
    const next = <T>(type: string) =>
      new Promise<T>((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`server exited with ${code}`));
        const on = (m: { type?: string } & Record<string, unknown>) => {
          if (m.type !== type) return;
          child.off('message', on);
          child.off('exit', onExit);
          resolve((m.port ?? m.stats) as T);
        };
        child.on('message', on);
        child.once('exit', onExit);
      });
    const port = await next<number>('ready');
    return {
      url: `http://127.0.0.1:${port}/`,
      stats: () => {
        const reply = next<PgStats>('stats');
        child.send('stats');
        return reply;
      },
      stop: () =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGINT');
        }),
    };
  }

  const profiled = args.get('profile') as Contender | undefined;
  if (profiled !== undefined) {
    for (const rules of sets) {
      const prefix = `p${Math.random().toString(36).slice(2, 8)}_`;
      await profileServer(
        (flags) => startServer({ contender: profiled, rules, url: database.url, prefix }, flags),
        (url, seconds) =>
          load.run({
            url,
            scenario: rules === 'one' ? 'rotating' : 'three',
            connections: CONNECTIONS,
            durationS: seconds,
          }),
        `${profiled} ${rules}`,
        durationS,
      );
    }
    await admin.end();
    await load.stop();
    await database.stop();
    return;
  }
  const samples: Sample[] = [];
  const contenders: Contender[] = ['none', 'sluice', 'rlflex'];
  for (const rules of sets) {
    const mine = rules === 'three' ? [...contenders, 'sluice-lease' as const] : contenders;
    const servers = new Map<Contender, Awaited<ReturnType<typeof startServer>>>();
    for (const contender of mine) {
      const prefix = `b${Math.random().toString(36).slice(2, 8)}_`;
      servers.set(contender, await startServer({ contender, rules, url: database.url, prefix }));
    }
    const measure = async (contender: Contender, rate?: number): Promise<Sample> => {
      const server = servers.get(contender)!;
      const before = await server.stats();
      const dbBefore = await databaseCpu();
      const result = await load.run({
        url: server.url,
        scenario: rules === 'one' ? 'rotating' : 'three',
        connections: CONNECTIONS,
        durationS,
        ...(rate === undefined ? {} : { rate }),
      });
      const dbAfter = await databaseCpu();
      const after = await server.stats();
      const requests = Math.max(1, after.requests - before.requests);
      const invalid =
        result.non2xx + result.errors + result.timeouts > 0 ||
        after.failedOpen > before.failedOpen ||
        after.errors > before.errors;
      return {
        contender,
        rules,
        rps: result.rps,
        p99: result.p99,
        cpuUsPerReq: (after.cpuMicros - before.cpuMicros) / requests,
        dbUsPerReq: (dbAfter - dbBefore) / requests,
        tripsPerReq: (after.roundTrips - before.roundTrips) / requests,
        txPerReq: (after.transactions - before.transactions) / requests,
        invalid,
        failedOpen: after.failedOpen - before.failedOpen,
      };
    };
    for (const contender of mine)
      await load.run({
        url: servers.get(contender)!.url,
        scenario: rules === 'one' ? 'rotating' : 'three',
        connections: CONNECTIONS,
        durationS: 2,
      });
    const max: Sample[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const contender of rotate(mine, round)) {
        const sample = await measure(contender);
        max.push(sample);
        console.log(JSON.stringify({ phase: 'max', round, ...sample }));
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
    samples.push(...max);
    const medianOf = (c: Contender) => spread(max.filter((s) => s.contender === c).map((s) => s.rps)).median;
    const half = Math.round(Math.min(medianOf('sluice'), medianOf('rlflex')) / 2);
    const fixed: Sample[] = [];
    for (let round = 0; round < Math.max(2, Math.ceil(rounds / 2)); round++) {
      for (const contender of rotate(mine, round)) {
        const sample = await measure(contender, half);
        fixed.push(sample);
        console.log(JSON.stringify({ phase: 'half', rate: half, round, ...sample }));
      }
    }
    report(rules, mine, max, fixed, half, { spread, showSpread });
    for (const server of servers.values()) await server.stop();
  }
  console.log(
    `PostgreSQL ${version}, Node.js ${process.version}, pool ${process.env.BENCH_PG_POOL ?? POOL_SIZE}, ${CONNECTIONS} connections`,
  );
  await admin.end();
  await load.stop();
  await database.stop();
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}

/**
 * `--profile=<contender>`: that server under node --cpu-prof, loaded for `seconds` after a 2 s warm-up; prints
 * its rate, then the files and functions with the most self time, and the total time under a few named functions.
 */
async function profileServer(
  start: (nodeFlags: readonly string[]) => Promise<{ url: string; stop(): Promise<void> }>,
  run: (url: string, seconds: number) => Promise<{ rps: number; p99: number }>,
  label: string,
  seconds: number,
): Promise<void> {
  const { mkdtempSync, readdirSync, readFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-prof-'));
  const server = await start(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  await run(server.url, 2);
  const result = await run(server.url, seconds);
  await server.stop();
  console.log(`${label}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`);
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error('no profile written');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
  };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const place = (url: string) => url.replace(/^.*\/(node_modules|packages)\//, '');
  const self = new Map<string, number>();
  const byFile = new Map<string, number>();
  const total = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = byId.get(id)!.callFrame;
    const where = `${frame.functionName || '(anonymous)'} ${place(frame.url)}:${frame.lineNumber + 1}`;
    self.set(where, (self.get(where) ?? 0) + 1);
    const owner = place(frame.url).replace(/\/(built|lib|dist)\/.*$/, '') || '(native)';
    byFile.set(owner, (byFile.get(owner) ?? 0) + 1);
    // Inclusive time: every distinct function on the sample's stack.
    const stack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      stack.add(`${f.functionName || '(anonymous)'} ${place(f.url)}:${f.lineNumber + 1}`);
    }
    for (const name of stack) total.set(name, (total.get(name) ?? 0) + 1);
  }
  const count = profile.samples.length;
  const show = (title: string, map: Map<string, number>, n: number) => {
    console.log(title);
    for (const [name, hits] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n))
      console.log(`${((100 * hits) / count).toFixed(1).padStart(5)}%  ${name}`);
  };
  show('self time by file:', byFile, 20);
  show('self time by function:', self, 40);
  show('total time by function:', total, 60);
  console.log(`profile: ${join(dir, file)}`);
}

type Stats = {
  spread: (values: readonly number[]) => { median: number; min: number; max: number };
  showSpread: (s: { median: number; min: number; max: number }, digits?: number) => string;
};

function report(
  rules: RuleSet,
  contenders: Contender[],
  max: Sample[],
  fixed: Sample[],
  half: number,
  stats: Stats,
): void {
  const of = (list: Sample[], c: Contender, pick: (s: Sample) => number) =>
    stats.spread(list.filter((s) => s.contender === c).map(pick));
  const p99None = of(fixed, 'none', (s) => s.p99).median;
  console.log(`\n### ${rules} rule${rules === 'one' ? '' : 's'} (half load: ${half} req/s)\n`);
  console.log(
    '| contender | req/s | server µs/req | PostgreSQL µs/req | round trips/req | transactions/req | p99 at half load, ms | added p99, ms | invalid rounds | failed open |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const c of contenders) {
    const p99 = of(fixed, c, (s) => s.p99);
    console.log(
      `| ${c} | ${stats.showSpread(
        of(max, c, (s) => s.rps),
        0,
      )} | ${stats.showSpread(
        of(max, c, (s) => s.cpuUsPerReq),
        0,
      )} | ${stats.showSpread(
        of(max, c, (s) => s.dbUsPerReq),
        0,
      )} | ` +
        `${of(max, c, (s) => s.tripsPerReq).median.toFixed(2)} | ${of(max, c, (s) => s.txPerReq).median.toFixed(2)} | ` +
        `${stats.showSpread(p99, 1)} | ${(p99.median - p99None).toFixed(1)} | ${[...max, ...fixed].filter((s) => s.contender === c && s.invalid).length} | ` +
        `${[...max, ...fixed].filter((s) => s.contender === c).reduce((sum, s) => sum + s.failedOpen, 0)} |`,
    );
  }
}

const serverSpec = process.env.BENCH_PG_SPEC;
if (serverSpec !== undefined) await serve(JSON.parse(serverSpec) as PgSpec);
else await main();

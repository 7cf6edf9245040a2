/**
 * Regions (issue 44): what a regional + global rule pair costs a request, against the same rules on one local
 * store. Fastify with @sluice/fastify, a rule per API key and a `scope: global` rule on /search, under the same
 * open-loop rate:
 * - `local`: three servers, the rules on one local redis-server, no regions (a single-region deployment);
 * - `regions`: three servers (us, eu, ap), each on its own redis-server with `regions`, sharing a global
 *   redis-server through TCP proxies adding 50, 100 and 150 ms of round trip.
 * Both split the traffic 80/15/5 between their three servers, so that the process count does not differ.
 * Per contender, rounds interleaved: client p50/p99, server CPU µs per request (every server process), the
 * region's store calls per request (script calls on the regional servers) and the global store's calls per
 * second per gateway. Servers run on CPU 0, the load, proxies and redis-servers on CPU 1 (taskset).
 *
 * Run: npx tsx bench/regions.ts [--rounds=3] [--seconds=10] [--rps=600] [--json=FILE]
 * The same file is the server child (BENCH_REGIONS_SERVER), run by node with tsx on the sources.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Redis as RedisClient } from 'ioredis';

const GLOBAL_RULE = 'search_global';
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const REGIONS = [
  { name: 'us', share: 0.8, oneWayMs: 25 },
  { name: 'eu', share: 0.15, oneWayMs: 50 },
  { name: 'ap', share: 0.05, oneWayMs: 75 },
] as const;

/** What a server child is told. */
interface ServerSpec {
  readonly regionalPort: number;
  readonly prefix: string;
  /** Absent: no regions (the rules on the regional store alone). */
  readonly region?: { readonly name: string; readonly globalPort: number; readonly globalPrefix: string };
  readonly limit: number;
}

/** What a server child reports. */
interface ServerStats {
  readonly requests: number;
  readonly cpuMicros: number;
  readonly failedOpen: number;
  readonly rounds: number;
}

// ---------------------------------------------------------------- the server child

async function serve(spec: ServerSpec): Promise<void> {
  const [{ rateLimit }, { RedisStore, recommendedRedisOptions }, { Redis }, { default: Fastify }] =
    await Promise.all([
      import('@sluice/fastify'),
      import('@sluice/redis'),
      import('ioredis'),
      import('fastify'),
    ]);
  const client = (port: number) => new Redis({ host: '127.0.0.1', port, ...recommendedRedisOptions });
  const quiet = { warn: () => {} };
  const stats = { requests: 0, failedOpen: 0, rounds: 0 };
  const app = Fastify({ logger: false });
  // Before the limiter's hook: a request it refuses is counted too.
  app.addHook('onRequest', async () => {
    stats.requests++;
  });
  const per = { requests: spec.limit, per: '1s' };
  await app.register(rateLimit, {
    rules: {
      domain: 'bench',
      rules: [
        { name: 'search_per_key', match: { route: '/search' }, key: ['api_key'], limit: per },
        {
          name: GLOBAL_RULE,
          match: { route: '/search' },
          key: [],
          global: true,
          limit: per,
          algorithm: 'fixed_window',
          scope: 'global',
        },
      ],
    },
    store: new RedisStore({ client: client(spec.regionalPort), prefix: spec.prefix, logger: quiet }),
    ...(spec.region === undefined
      ? {}
      : {
          regions: {
            region: spec.region.name,
            global: new RedisStore({
              client: client(spec.region.globalPort),
              prefix: spec.region.globalPrefix,
              timeoutMs: 1000,
              logger: quiet,
            }),
          },
        }),
    logger: quiet,
    silence: ['SLUICE_UNVALIDATED_API_KEY'],
    observer: {
      onDecision: (decision) => {
        if (decision.failedOpen) stats.failedOpen++;
      },
      onRegion: (event) => {
        if (event.kind === 'round') stats.rounds++;
      },
    },
  });
  app.get('/search', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (message) => {
    if (message !== 'stats') return;
    const cpu = process.cpuUsage();
    process.send?.({ type: 'stats', stats: { ...stats, cpuMicros: cpu.user + cpu.system } });
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready', port: (app.server.address() as AddressInfo).port });
}

// ---------------------------------------------------------------- the run

interface Server {
  readonly url: string;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

function next<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`server exited with ${code}`));
    const on = (m: { type?: string; port?: T; stats?: T }) => {
      if (m.type !== type) return;
      child.off('message', on);
      child.off('exit', onExit);
      resolve((m.port ?? m.stats) as T);
    };
    child.on('message', on);
    child.once('exit', onExit);
  });
}

async function startServer(spec: ServerSpec): Promise<Server> {
  const file = fileURLToPath(import.meta.url);
  const tsconfig = fileURLToPath(new URL('../tsconfig.json', import.meta.url));
  const child = spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, '--import', 'tsx', file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_REGIONS_SERVER: JSON.stringify(spec), TSX_TSCONFIG_PATH: tsconfig },
  });
  const port = await next<number>(child, 'ready');
  return {
    url: `http://127.0.0.1:${port}`,
    stats() {
      const reply = next<ServerStats>(child, 'stats');
      child.send('stats');
      return reply;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

interface Sample {
  readonly contender: 'local' | 'regions';
  readonly round: number;
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuUsPerRequest: number;
  readonly regionalCallsPerRequest: number;
  readonly globalCallsPerSecondPerGateway: number;
  readonly globalCallsPerRequest: number;
  readonly non200: number;
  readonly failedOpen: number;
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      rps: { type: 'string', default: '600' },
      json: { type: 'string' },
    },
  });
  const rounds = Number(args.rounds);
  const seconds = Number(args.seconds);
  const rps = Number(args.rps);
  // The global limit sits above the rate: every request is admitted, in both contenders alike.
  const limit = Math.ceil(rps * 1.25);
  try {
    execFileSync('taskset', ['-p', '-c', String(LOAD_CPU), String(process.pid)], { stdio: 'ignore' });
  } catch {}
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  const { startRedis, scriptCalls, randomPrefix, ready } = await import('../test/support/redis.js');
  const { startTcpProxy } = await import('../test/support/tcp-proxy.js');
  const { runLoad, quantile } = await import('../test/regions/load.js');
  const { Redis } = await import('ioredis');

  const local = await startRedis();
  const global = await startRedis();
  const regional = await Promise.all(REGIONS.map(() => startRedis()));
  const proxies = await Promise.all(REGIONS.map((r) => startTcpProxy(global.port, { delayMs: r.oneWayMs })));
  const admin = (port: number) => new Redis({ host: '127.0.0.1', port });
  const admins = [local, global, ...regional].map((s) => admin(s.port));
  await Promise.all(admins.map(ready));
  const [localAdmin, globalAdmin, ...regionalAdmins] = admins as [RedisClient, RedisClient, ...RedisClient[]];
  const globalPrefix = randomPrefix('g');
  const localPrefix = randomPrefix('l');
  const singles = await Promise.all(
    REGIONS.map(() => startServer({ regionalPort: local.port, prefix: localPrefix, limit })),
  );
  const regions = await Promise.all(
    REGIONS.map((r, i) =>
      startServer({
        regionalPort: regional[i]!.port,
        prefix: randomPrefix('r'),
        region: { name: r.name, globalPort: proxies[i]!.port, globalPrefix },
        limit,
      }),
    ),
  );
  const calls = async (list: readonly RedisClient[]) =>
    (await Promise.all(list.map(scriptCalls))).reduce((a, b) => a + b, 0);

  async function measure(contender: Sample['contender'], round: number): Promise<Sample> {
    const servers = contender === 'local' ? singles : regions;
    const stores = contender === 'local' ? [localAdmin] : regionalAdmins;
    const before = await Promise.all(servers.map((s) => s.stats()));
    const storeBefore = await calls(stores);
    const globalBefore = await scriptCalls(globalAdmin);
    const started = performance.now();
    const results = await Promise.all(
      servers.map((server, i) =>
        runLoad({
          url: server.url,
          rps: rps * REGIONS[i]!.share,
          durationMs: seconds * 1000,
          headers: (n) => ({ 'x-api-key': `${contender}-${n % 100}` }),
          maxInFlight: 256,
        }),
      ),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const after = await Promise.all(servers.map((s) => s.stats()));
    const storeCalls = (await calls(stores)) - storeBefore;
    const globalCalls = (await scriptCalls(globalAdmin)) - globalBefore;
    const requests = after.reduce((sum, s, i) => sum + s.requests - before[i]!.requests, 0);
    const cpu = after.reduce((sum, s, i) => sum + s.cpuMicros - before[i]!.cpuMicros, 0);
    const latencies = results.flatMap((r) => r.latencies);
    const non200 = results.reduce(
      (sum, r) =>
        sum + [...r.statuses].reduce((n, [code, count]) => n + (code === 200 ? 0 : count), 0) + r.errors,
      0,
    );
    return {
      contender,
      round,
      requests,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      cpuUsPerRequest: cpu / requests,
      regionalCallsPerRequest: storeCalls / requests,
      globalCallsPerSecondPerGateway: contender === 'local' ? 0 : globalCalls / elapsedS / servers.length,
      globalCallsPerRequest: contender === 'local' ? 0 : globalCalls / requests,
      non200,
      failedOpen: after.reduce((sum, s, i) => sum + s.failedOpen - before[i]!.failedOpen, 0),
    };
  }

  const samples: Sample[] = [];
  try {
    // Warm-up: connections, JIT, each region's first slices.
    await measure('local', 0);
    await measure('regions', 0);
    for (let round = 1; round <= rounds; round++) {
      const order: Sample['contender'][] = round % 2 === 1 ? ['local', 'regions'] : ['regions', 'local'];
      for (const contender of order) {
        const sample = await measure(contender, round);
        samples.push(sample);
        console.log(JSON.stringify(sample));
      }
    }
  } finally {
    for (const server of [...singles, ...regions]) await server.stop();
    for (const client of admins) client.disconnect();
    for (const proxy of proxies) await proxy.close();
    for (const server of [local, global, ...regional]) await server.stop();
  }
  const median = (values: number[]) => quantile(values, 0.5);
  const of = (contender: Sample['contender'], key: keyof Sample) =>
    median(samples.filter((s) => s.contender === contender).map((s) => s[key] as number));
  const row = (contender: Sample['contender']) =>
    `| ${contender} | ${of(contender, 'p50').toFixed(2)} | ${of(contender, 'p99').toFixed(2)} | ` +
    `${of(contender, 'cpuUsPerRequest').toFixed(0)} | ${of(contender, 'regionalCallsPerRequest').toFixed(3)} | ` +
    `${of(contender, 'globalCallsPerSecondPerGateway').toFixed(2)} | ${of(contender, 'globalCallsPerRequest').toFixed(4)} | ` +
    `${of(contender, 'non200')} |`;
  console.log(
    [
      `\n${rps} requests/s for ${seconds} s, ${rounds} rounds (medians); global limit ${limit}/s`,
      '| contender | p50 ms | p99 ms | server CPU µs/request | regional store calls/request | global calls/s per gateway | global calls/request | not 200 |',
      '|---|---|---|---|---|---|---|---|',
      row('local'),
      row('regions'),
    ].join('\n'),
  );
  const json = args.json;
  if (json !== undefined)
    writeFileSync(json, JSON.stringify({ rps, seconds, rounds, limit, samples }, null, 2));
}

const spec = process.env.BENCH_REGIONS_SERVER;
if (spec !== undefined) await serve(JSON.parse(spec) as ServerSpec);
else await main();

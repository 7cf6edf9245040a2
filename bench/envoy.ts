/**
 * The Envoy rate limit service (@sluice/envoy) on Redis: ShouldRateLimit calls per second on one core, and p99
 * at half that rate, with one and with three descriptors per call. The service runs in a child pinned to CPU 0
 * (taskset); this process (the gRPC client) and a private redis-server (never the shared 6379) on CPU 1.
 * Rounds alternate the two cases; figures are medians with (min-max) over the rounds: the machine is shared.
 * Run: npx tsx bench/envoy.ts [--rounds=5] [--seconds=3] [--in-flight=64]
 * Under tsx (TypeScript from source, as the tests run it), not a compiled build: figures are a lower bound.
 */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { createRateLimitService } from '@sluice/envoy';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { LOAD_CPU, SERVER_CPU } from './lib/children.js';
import { startBenchRedis } from './lib/redis.js';

const execFileAsync = promisify(execFile);
const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const KEYS = 10_000;
/** Limits no call reaches: the bench measures counting, not denials. */
const RULES = {
  domain: 'bench',
  rules: [
    { name: 'per_key', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 1e9, per: '1h' } },
    { name: 'per_route', match: { route: '/search' }, global: true, limit: { requests: 1e9, per: '1h' } },
    { name: 'per_tenant', match: { kind: 'tenant' }, key: ['tenant'], limit: { requests: 1e9, per: '1h' } },
  ],
} as const;

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? fallback : Number(arg.slice(name.length + 3));
}

// --- protobuf encoding of RateLimitRequest (field numbers of Envoy's rls.proto and ratelimit.proto) ---

function varint(value: number): number[] {
  const bytes: number[] = [];
  let v = value;
  while (v > 0x7f) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return bytes;
}

/** A length-delimited field. */
function field(number: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(number << 3) | 2, ...varint(body.length)]), body]);
}

const text = (number: number, value: string) => field(number, Buffer.from(value, 'utf8'));

/** RateLimitDescriptor (entries: field 1, each Entry key 1, value 2). */
function descriptor(...entries: [string, string][]): Buffer {
  return Buffer.concat(entries.map(([k, v]) => field(1, Buffer.concat([text(1, k), text(2, v)]))));
}

/** RateLimitRequest: domain 1, descriptors 2. */
function request(descriptors: number, key: number): Buffer {
  const all = [
    descriptor(['auth', 'api_key'], ['api_key', `k${key}`]),
    descriptor(['route', '/search']),
    descriptor(['kind', 'tenant'], ['tenant', `t${key % 100}`]),
  ].slice(0, descriptors);
  return Buffer.concat([text(1, 'bench'), ...all.map((d) => field(2, d))]);
}

// --- the service, in a child on the server CPU ---

/** Failed-open calls are counted (stats().storeFailed) and reported by the parent, not logged per episode. */
const quiet = { warn() {} };

async function serve(): Promise<void> {
  const client = new Redis({
    ...recommendedRedisOptions,
    host: '127.0.0.1',
    port: Number(process.env.BENCH_REDIS_PORT),
  });
  // 250 ms, as the other benches: a neighbour's burst must make a round slow, not failed open.
  const store = new RedisStore({ client, prefix: 'benchenvoy', timeoutMs: 250 });
  const service = await createRateLimitService({ rules: RULES, store, port: 0, watch: false, logger: quiet });
  process.send?.({ port: service.port });
  // The server's own CPU time, asked for around each closed-loop phase: steadier than calls/s on a busy machine.
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMicros: user + system, storeFailed: service.stats().storeFailed });
  });
  process.once('SIGINT', () => {
    void service.close().then(() => {
      client.disconnect();
      process.exit(0);
    });
  });
}

// --- the client ---

interface Client {
  call(body: Buffer): Promise<Buffer>;
  close(): void;
}

function rlsClient(port: number): Client {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const same = (buffer: Buffer) => buffer;
  return {
    call: (body) =>
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(PATH, same, same, body, (error, reply) =>
          error ? reject(error) : resolve(reply as Buffer),
        ),
      ),
    close: () => client.close(),
  };
}

/** OVER_LIMIT (overall_code 2) would mean the bench measured denials: refuse the round instead. */
function assertOk(reply: Buffer): void {
  if (reply[0] !== 0x08 || reply[1] !== 1) throw new Error('a call was not answered OK');
}

/** Closed loop: `inFlight` calls outstanding for `seconds`; calls per second and calls made. */
async function maxRate(client: Client, bodies: readonly Buffer[], inFlight: number, seconds: number) {
  let calls = 0;
  const until = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) assertOk(await client.call(bodies[calls++ % bodies.length]!));
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { rate: calls / ((performance.now() - started) / 1000), calls };
}

/** Open loop at `rate` calls per second for `seconds`: latency percentiles, ms. */
async function latencyAt(client: Client, bodies: readonly Buffer[], rate: number, seconds: number) {
  const latencies: number[] = [];
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    pending.push(
      client.call(bodies[i % bodies.length]!).then((reply) => {
        assertOk(reply);
        latencies.push(performance.now() - sent);
      }),
    );
  }
  await Promise.all(pending);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * EVALSHA and EVAL calls so far. (All commands would count the GET and SET each script runs inside, as Redis 7's
 * commandstats does.)
 */
async function scriptCalls(admin: Redis): Promise<number> {
  let calls = 0;
  for (const match of (await admin.info('commandstats')).matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm))
    calls += Number(match[1]);
  return calls;
}

const median = (values: readonly number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const range = (values: readonly number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

async function main(): Promise<void> {
  const rounds = option('rounds', 5);
  const seconds = option('seconds', 3);
  const inFlight = option('in-flight', 64);
  await execFileAsync('taskset', ['-pc', String(LOAD_CPU), String(process.pid)]);
  const redis = await startBenchRedis();
  const child = spawn(
    'taskset',
    [
      '-c',
      String(SERVER_CPU),
      process.execPath,
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--serve',
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_REDIS_PORT: String(redis.server.port) },
    },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m) => resolve((m as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    });
    const client = rlsClient(port);
    const cases = [1, 3].map((n) => ({
      descriptors: n,
      bodies: Array.from({ length: KEYS }, (_, key) => request(n, key)),
      rates: [] as number[],
      p50: [] as number[],
      p99: [] as number[],
      cpu: [] as number[],
      scripts: [] as number[],
      failedOpen: 0,
      calls: 0,
    }));
    const serverState = () =>
      new Promise<{ cpuMicros: number; storeFailed: number }>((resolve) => {
        child.once('message', (m) => resolve(m as { cpuMicros: number; storeFailed: number }));
        child.send('state');
      });
    for (const c of cases) await maxRate(client, c.bodies, inFlight, 1); // warm-up: JIT, script load
    for (let round = 0; round < rounds; round++) {
      for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
        const before = await serverState();
        const scriptsBefore = await scriptCalls(redis.admin);
        const { rate, calls } = await maxRate(client, c.bodies, inFlight, seconds);
        const after = await serverState();
        c.cpu.push(after.cpuMicros - before.cpuMicros);
        c.failedOpen += after.storeFailed - before.storeFailed;
        c.calls += calls;
        c.scripts.push(((await scriptCalls(redis.admin)) - scriptsBefore) / calls);
        c.cpu[c.cpu.length - 1]! /= calls;
        const { p50, p99 } = await latencyAt(client, c.bodies, rate / 2, seconds);
        c.rates.push(rate);
        c.p50.push(p50);
        c.p99.push(p99);
      }
    }
    client.close();
    console.log(
      `Envoy rate limit service on Redis ${await redis.version()}, Node ${process.version}, ${rounds} rounds of ${seconds}s`,
    );
    console.log(
      '| descriptors | calls/s (max, one core) | server CPU µs per call | script calls per call | p50 at half, ms | p99 at half, ms |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const c of cases)
      console.log(
        `| ${c.descriptors} | ${range(c.rates, 0)} | ${range(c.cpu, 0)} | ${range(c.scripts, 3)} | ${range(c.p50, 2)} | ${range(c.p99, 2)} |`,
      );
    for (const c of cases)
      console.log(
        `${c.descriptors} descriptor(s): ${c.failedOpen} of ${c.calls} closed-loop calls failed open`,
      );
    console.log('median (min–max) over the rounds');
  } finally {
    child.kill('SIGINT');
    await redis.stop();
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();

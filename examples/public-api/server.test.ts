import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  freePort,
  type RedisClusterHandle,
  type RedisServer,
  startCluster,
  startRedis,
} from '../../test/support/redis.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

interface Example {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

/** Spawns an example the way `pnpm example` does (tsx from the repository root), gathering what it prints. */
function spawnExample(script: string, env: Record<string, string>): Omit<Example, 'url'> {
  const { REDIS_URL: _ignored, ...inherited } = process.env;
  const child = spawn(TSX, [script], {
    cwd: ROOT,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const gather = (chunk: Buffer) => {
    output += chunk;
  };
  child.stdout?.on('data', gather);
  child.stderr?.on('data', gather);
  return { child, output: () => output };
}

/** Starts an example on a free port, once it says where it listens. */
async function startExample(script: string, env: Record<string, string> = {}): Promise<Example> {
  const { child, output } = spawnExample(script, env);
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const found = /listening on (http:\/\/\S+)/.exec(output());
      if (found?.[1]) {
        clearInterval(poll);
        resolve(found[1]);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${script} exited with ${code}:\n${output()}`));
    });
  });
  return { child, url, output };
}

async function stopExample(example: Example): Promise<void> {
  if (example.child.exitCode !== null) return;
  // 'close', not 'exit': by then every line the example printed has been read.
  const closed = once(example.child, 'close');
  example.child.kill('SIGTERM');
  const timer = setTimeout(() => example.child.kill('SIGKILL'), 5000);
  await closed;
  clearTimeout(timer);
}

/** Runs an example that should not start, to its exit: its exit code and everything it printed. */
async function runToExit(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const { child, output } = spawnExample(script, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, output: output() };
}

/** A line of a stack trace, as Node prints an uncaught error or ioredis an unhandled error event. */
const STACK_LINE = /^\s+at .+:\d+:\d+\)?$/m;

/**
 * A first request through each instance: its first script call sends the whole script and may pass the
 * 20 ms time limit on a loaded machine, where /login (on_store_error: deny) would answer 503.
 */
async function warmUp(...urls: string[]): Promise<void> {
  for (const url of urls) await request(url).get('/search?q=warm').expect(200);
}

async function loginUntilLimited(url: string): Promise<void> {
  const login = () => request(url).post('/login').send({ user: 'demo', password: 'wrong' });
  for (let i = 0; i < 5; i++) await login().expect(401);
  const denied = await login().expect(429);
  expect(denied.headers['x-ratelimit-rule']).toBe('login_per_ip');
  expect(Number(denied.headers['retry-after'])).toBeGreaterThan(3500);
  expect(denied.body).toMatchObject({ error: 'rate_limited', rule: 'login_per_ip' });
}

// Each test starts processes through tsx: on a loaded 2-core machine that alone can take tens of seconds.
describe('examples, started as `pnpm example` starts them', { timeout: 120_000 }, () => {
  const started: Example[] = [];
  let redis: RedisServer | RedisClusterHandle | undefined;

  afterEach(async () => {
    await Promise.all(started.splice(0).map(stopExample));
    await redis?.stop();
    redis = undefined;
  });

  it.each([
    'examples/public-api/server.ts',
    'examples/express/server.ts',
    'examples/koa/server.ts',
    'examples/hono/server.ts',
    'examples/nestjs/server.ts',
  ])('%s limits logins to five an hour, skips /health and keys /account by API key', async (script) => {
    const example = await startExample(script);
    started.push(example);
    await loginUntilLimited(example.url);
    for (let i = 0; i < 3; i++) await request(example.url).get('/health').expect(200);
    const account = await request(example.url).get('/account').set('x-api-key', 'k_demo').expect(200);
    expect(account.headers['ratelimit-policy']).toBe('"key_default";q=600;w=60');
    const acme = await request(example.url).get('/account').set('x-api-key', 'k_acme').expect(200);
    expect(acme.headers['ratelimit-policy']).toBe('"key_override_acme";q=3000;w=60');
  });

  it('serves Prometheus metrics on /metrics, with no key in them', async () => {
    const example = await startExample('examples/public-api/server.ts');
    started.push(example);
    await loginUntilLimited(example.url);
    await request(example.url).get('/account').set('x-api-key', 'k_acme').expect(200);
    const scraped = await request(example.url).get('/metrics').expect(200);
    expect(scraped.text).toMatch(
      /sluice_decisions_total\{rule="login_per_ip",mode="enforce",outcome="denied"\} 1/,
    );
    expect(scraped.text).toMatch(/sluice_rules_info\{domain="public_api",version="[0-9a-f]{12}"\} 1/);
    expect(scraped.text).not.toContain('k_acme');
    expect(scraped.text).not.toContain('127.0.0.1');
  });

  it('counts in Redis when REDIS_URL is set, shared by two instances', async () => {
    redis = await startRedis();
    const env = { REDIS_URL: `redis://${redis.host}:${redis.port}` };
    const first = await startExample('examples/public-api/server.ts', env);
    started.push(first);
    const second = await startExample('examples/public-api/server.ts', env);
    started.push(second);
    expect(first.output()).toMatch(/Redis counters/);
    await warmUp(first.url, second.url);
    const login = (url: string) => request(url).post('/login').send({ user: 'demo', password: 'wrong' });
    for (let i = 0; i < 3; i++) await login(first.url).expect(401);
    for (let i = 0; i < 2; i++) await login(second.url).expect(401);
    await login(first.url).expect(429);
    await login(second.url).expect(429);
  });

  it('counts in a Redis Cluster when REDIS_CLUSTER_NODES is set', async () => {
    const cluster = await startCluster();
    redis = cluster;
    const env = { REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',') };
    const first = await startExample('examples/public-api/server.ts', env);
    started.push(first);
    const second = await startExample('examples/public-api/server.ts', env);
    started.push(second);
    await warmUp(first.url, second.url);
    const login = (url: string) => request(url).post('/login').send({ user: 'demo', password: 'wrong' });
    for (let i = 0; i < 3; i++) await login(first.url).expect(401);
    for (let i = 0; i < 2; i++) await login(second.url).expect(401);
    await login(second.url).expect(429);
  });

  it('starts with REDIS_URL at a Redis that is not running: fails open, login fails closed, one line says so', async () => {
    const nothing = await freePort();
    const example = await startExample('examples/public-api/server.ts', {
      REDIS_URL: `redis://127.0.0.1:${nothing}`,
    });
    started.push(example);
    expect(example.output()).toMatch(/listening on .*Redis not answering yet, failing open until it does/);
    for (let i = 0; i < 70; i++) {
      // Past anon_per_ip's 60 a minute: nothing counts while Redis is down.
      const search = await request(example.url).get('/search?q=a').expect(200);
      expect(search.headers['ratelimit-policy']).toBeUndefined();
    }
    // login_per_ip has on_store_error: deny.
    const login = await request(example.url)
      .post('/login')
      .send({ user: 'demo', password: 'demo' })
      .expect(503);
    expect(login.body).toMatchObject({ error: 'rate_limit_unavailable', rule: 'login_per_ip' });
    await stopExample(example);
    const notices = example
      .output()
      .split('\n')
      .filter((line) => line.includes('SLUICE_STORE_UNREACHABLE'));
    expect(notices).toEqual([
      'sluice: Redis store unreachable (ECONNREFUSED), failing open until it answers [SLUICE_STORE_UNREACHABLE]',
    ]);
    expect(example.output()).not.toMatch(STACK_LINE);
    expect(example.output()).not.toContain('Unhandled error');
    expect(example.output().match(/ECONNREFUSED/g)).toHaveLength(1);
  });

  it.each([
    ['public-api', 'examples/public-api/server.ts', 'pnpm example'],
    ['express example', 'examples/express/server.ts', 'npx tsx examples/express/server.ts'],
    ['koa example', 'examples/koa/server.ts', 'npx tsx examples/koa/server.ts'],
    ['hono example', 'examples/hono/server.ts', 'npx tsx examples/hono/server.ts'],
    ['nestjs example', 'examples/nestjs/server.ts', 'npx tsx examples/nestjs/server.ts'],
  ])('%s on a port in use: names PORT and exits 1 without a stack trace', async (name, script, command) => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      const { code, output } = await runToExit(script, { PORT: String(port) });
      expect(code).toBe(1);
      expect(output.trim()).toBe(
        `${name}: port ${port} is in use on 127.0.0.1: set PORT to a free one (PORT=3001 ${command}) [EADDRINUSE]`,
      );
      expect(output).not.toMatch(STACK_LINE);
    } finally {
      taken.close();
    }
  });
});

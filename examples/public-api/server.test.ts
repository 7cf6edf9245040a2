import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
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

/** Starts an example the way `pnpm example` does (tsx from the repository root), on a free port. */
async function startExample(script: string, env: Record<string, string> = {}): Promise<Example> {
  const { REDIS_URL: _ignored, ...inherited } = process.env;
  const child = spawn(TSX, [script], {
    cwd: ROOT,
    env: { ...inherited, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found?.[1]) {
        clearInterval(poll);
        resolve(found[1]);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${script} exited with ${code}:\n${output}`));
    });
  });
  return { child, url, output: () => output };
}

async function stopExample(example: Example): Promise<void> {
  if (example.child.exitCode !== null) return;
  const exited = once(example.child, 'exit');
  example.child.kill('SIGTERM');
  const timer = setTimeout(() => example.child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function loginUntilLimited(url: string): Promise<void> {
  const login = () => request(url).post('/login').send({ user: 'demo', password: 'wrong' });
  for (let i = 0; i < 5; i++) await login().expect(401);
  const denied = await login().expect(429);
  expect(denied.headers['x-ratelimit-rule']).toBe('login_per_ip');
  expect(Number(denied.headers['retry-after'])).toBeGreaterThan(3500);
  expect(denied.body).toMatchObject({ error: 'rate_limited', rule: 'login_per_ip' });
}

describe('examples, started as `pnpm example` starts them', () => {
  const started: Example[] = [];
  let redis: RedisServer | RedisClusterHandle | undefined;

  afterEach(async () => {
    await Promise.all(started.splice(0).map(stopExample));
    await redis?.stop();
    redis = undefined;
  });

  it.each(['examples/public-api/server.ts', 'examples/express/server.ts', 'examples/koa/server.ts'])(
    '%s limits logins to five an hour, skips /health and keys /account by API key',
    async (script) => {
      const example = await startExample(script);
      started.push(example);
      await loginUntilLimited(example.url);
      for (let i = 0; i < 3; i++) await request(example.url).get('/health').expect(200);
      const account = await request(example.url).get('/account').set('x-api-key', 'k_demo').expect(200);
      expect(account.headers['ratelimit-policy']).toBe('"key_default";q=600;w=60');
      const acme = await request(example.url).get('/account').set('x-api-key', 'k_acme').expect(200);
      expect(acme.headers['ratelimit-policy']).toBe('"key_override_acme";q=3000;w=60');
    },
  );

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
    const login = (url: string) => request(url).post('/login').send({ user: 'demo', password: 'wrong' });
    for (let i = 0; i < 3; i++) await login(first.url).expect(401);
    for (let i = 0; i < 2; i++) await login(second.url).expect(401);
    await login(second.url).expect(429);
  });
});

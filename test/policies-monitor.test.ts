/**
 * Issue 13's "one round trip per request, measured with MONITOR", for the policies: a rules set using ban with
 * escalate and penalty, count: failed, idempotent and adaptive together with a plain rule, through Express over
 * real HTTP, counters in a private redis-server. What MONITOR sees from the store's connection:
 *
 * - every request, whatever it meets (a charge, a denial, a ban, a retry answered by its idempotency marker),
 *   is exactly ONE EVALSHA of the evaluation script, all its rules' counters, ban state and markers together;
 * - a request whose `count` charge is given back (a login that succeeded) adds one more EVALSHA of the same
 *   script when its response ends; one whose charge stays, or that was denied, adds nothing;
 * - adaptive rules add an EVALSHA of the factor script per report, at most one per 250 ms of the limiter's
 *   clock (here it steps 50 ms a request, so about one request in five), never one per request;
 * - nothing else: no GET, SET or EXPIRE of its own.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RuleSpec } from '@sluice/core';
import { rateLimit } from '@sluice/express';
import { ADAPT_SCRIPT, EVALUATE_SCRIPT, luaAlgorithms, RedisStore } from '@sluice/redis';
import express from 'express';
import { expect, it } from 'vitest';
import { oneAlgorithmScript } from '../packages/redis/src/oneAlgorithmScript.js';
import { until } from './support/counting-store.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
/**
 * The evaluation scripts: the general one (rules with policies), and the lean one that /pay's two sliding_window
 * rules without policies take (oneAlgorithmScript.ts).
 */
const EVALUATE_SHAS = new Set([sha1(EVALUATE_SCRIPT), oneAlgorithmScript(luaAlgorithms.sliding_window).sha]);
const STEP_MS = 50;

const RULES: RuleSpec[] = [
  { name: 'everyone', key: ['ip'], limit: { requests: 1000, per: '1m' } },
  {
    name: 'backend',
    global: true,
    limit: { requests: 1000, per: '1s' },
    adaptive: { error_rate: '10%', min_samples: 5, interval: '1s' },
  },
  {
    name: 'login',
    match: { route: '/login' },
    key: ['ip'],
    algorithm: 'fixed_window',
    limit: { requests: 3, per: '1m' },
    count: 'failed',
    ban: { after: 2, within: '1m', for: '10m' },
    escalate: ['1h'],
    penalty: 1,
  },
  {
    name: 'orders',
    match: { route: '/orders' },
    key: ['ip'],
    limit: { requests: 2, per: '1m' },
    idempotent: '10m',
  },
];

/** One request of the script: what it is, the status it must get, and whether its charge is given back. */
interface Step {
  readonly what: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly status: number;
  readonly refund: boolean;
}

const right = { 'x-password': 'right' };
const wrong = { 'x-password': 'wrong' };
const STEPS: Step[] = [
  { what: 'login succeeds: refunded', path: '/login', headers: right, status: 200, refund: true },
  { what: 'login succeeds: refunded', path: '/login', headers: right, status: 200, refund: true },
  { what: 'login fails: stays counted', path: '/login', headers: wrong, status: 401, refund: false },
  { what: 'login fails: stays counted', path: '/login', headers: wrong, status: 401, refund: false },
  { what: 'login fails: the limit is spent', path: '/login', headers: wrong, status: 401, refund: false },
  { what: 'login denied: a violation', path: '/login', headers: right, status: 429, refund: false },
  { what: 'login denied: the ban', path: '/login', headers: right, status: 429, refund: false },
  { what: 'login banned', path: '/login', headers: right, status: 429, refund: false },
  {
    what: 'order charged',
    path: '/orders',
    headers: { 'idempotency-key': 'o-1' },
    status: 201,
    refund: false,
  },
  {
    what: 'order retried',
    path: '/orders',
    headers: { 'idempotency-key': 'o-1' },
    status: 201,
    refund: false,
  },
  {
    what: 'order charged',
    path: '/orders',
    headers: { 'idempotency-key': 'o-2' },
    status: 201,
    refund: false,
  },
  {
    what: 'order denied',
    path: '/orders',
    headers: { 'idempotency-key': 'o-3' },
    status: 429,
    refund: false,
  },
  ...Array.from({ length: 12 }, () => ({ what: 'payment', path: '/pay', status: 200, refund: false })),
];

const redis = redisSuite({ clientName: 'store_under_test' });

/** The policies app behind Express: /login answers by its password header, /orders 201, /pay 200. */
async function startApp(clock: () => number) {
  const store = new RedisStore({
    client: redis.client,
    prefix: randomPrefix('mon'),
    timeoutMs: 5000,
    breaker: false,
  });
  const limiter = rateLimit({ store, clock, rules: { domain: 'monitor', rules: RULES } });
  const app = express();
  app.use(limiter);
  app.post('/login', (req, res) => {
    res.status(req.headers['x-password'] === 'right' ? 200 : 401).end();
  });
  app.post('/orders', (_req, res) => {
    res.status(201).end();
  });
  app.post('/pay', (_req, res) => {
    res.status(200).end();
  });
  const http = createServer(app);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const close = async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await limiter.limiter.close();
  };
  return { url, close };
}

/** MONITOR of the store's connection: the commands it sent, as argument lists, in order. */
async function monitorStoreConnection() {
  const list = (await redis.admin.client('LIST')) as string;
  const address = /addr=(\S+) .*name=store_under_test/.exec(list)?.[1];
  expect(address).toBeDefined();
  const monitor = await redis.admin.monitor();
  const seen: string[][] = [];
  let fences = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== address) return;
    if (args[0]?.toLowerCase() === 'echo') fences++;
    else seen.push(args);
  });
  /** Resolves once MONITOR has seen everything the store's connection sent before now. */
  const fence = async () => {
    const want = fences + 1;
    await redis.client.echo('fence');
    await until(() => fences >= want);
  };
  return { seen, fence, stop: () => monitor.disconnect() };
}

/** An argument as sent: MONITOR shows it escaped (newlines as \n, quotes as \", bytes as \xHH). */
const unescaped = (text: string) =>
  text.replace(/\\(x[0-9a-f]{2}|.)/g, (_, c: string) =>
    c.length === 3
      ? String.fromCharCode(Number.parseInt(c.slice(1), 16))
      : (({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[c] ?? c),
  );

/**
 * A script call by its script. The client sends EVAL of the text, not EVALSHA, the first time it calls a script:
 * the general script's first request (/pay, before MONITOR, takes the lean one).
 */
const scriptOf = (args: readonly string[]) => {
  const command = args[0]?.toLowerCase();
  if (command !== 'evalsha' && command !== 'eval') return `${args[0]}`;
  const sha = command === 'eval' ? sha1(unescaped(args[1] ?? '')) : args[1];
  if (sha !== undefined && EVALUATE_SHAS.has(sha)) return 'evaluate';
  return sha === ADAPT_SCRIPT.sha ? 'adapt' : 'other script';
};

it('each request is one EVALSHA; a refund one more at its end; adaptive reports a few a second', async () => {
  const clock = { now: Date.UTC(2026, 10, 30, 12) };
  const app = await startApp(() => clock.now);
  const send = (step: Pick<Step, 'path' | 'headers'>) =>
    fetch(`${app.url}${step.path}`, { method: 'POST', headers: step.headers ?? {} });
  // Loads both scripts on the server (EVAL once each) before MONITOR starts.
  expect((await send({ path: '/pay' })).status).toBe(200);
  const { seen, fence, stop } = await monitorStoreConnection();
  await fence();

  const evaluations: number[] = [];
  const statuses: number[] = [];
  let bodies: unknown;
  for (const step of STEPS) {
    clock.now += STEP_MS;
    const before = seen.filter((args) => scriptOf(args) === 'evaluate').length;
    const response = await send(step);
    statuses.push(response.status);
    if (step.what === 'login denied: the ban') bodies = await response.json();
    else await response.arrayBuffer();
    // A refund leaves when the response has ended, just after the client has it.
    await until(() => seen.filter((args) => scriptOf(args) === 'evaluate').length >= before + 1);
    if (step.refund)
      await until(() => seen.filter((args) => scriptOf(args) === 'evaluate').length >= before + 2);
    await fence();
    evaluations.push(seen.filter((args) => scriptOf(args) === 'evaluate').length - before);
  }
  await app.close();
  await fence();
  stop();

  // The policies did fire: refunds kept two good logins from counting, then a violation, a ban, a retry.
  expect(statuses).toEqual(STEPS.map((step) => step.status));
  expect(bodies).toMatchObject({ rule: 'login', reason: 'ban' });
  expect(evaluations).toEqual(STEPS.map((step) => (step.refund ? 2 : 1)));
  const kinds = seen.map(scriptOf);
  expect(kinds.filter((kind) => kind !== 'evaluate' && kind !== 'adapt')).toEqual([]);
  const reports = kinds.filter((kind) => kind === 'adapt').length;
  // The clock moved STEPS x 50 ms: at most one report each 250 ms, and far fewer than requests.
  expect(reports).toBeGreaterThanOrEqual(1);
  expect(reports).toBeLessThanOrEqual(Math.floor((STEPS.length * STEP_MS) / 250) + 1);
  expect(kinds.filter((kind) => kind === 'evaluate')).toHaveLength(
    STEPS.length + STEPS.filter((step) => step.refund).length,
  );
});

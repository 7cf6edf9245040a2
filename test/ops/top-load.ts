/**
 * What the watching tests share: the gateways' rules, a seeded Zipf load sent over real HTTP to several
 * gateways with its exact tally per key, the gateways as child processes, and the board read until it holds
 * the whole load.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  type CompiledRules,
  compileRules,
  type GatewayBoard,
  mergeBoards,
  parseBoard,
  tagFor,
} from '@sluice/core';
import type { RedisStore } from '@sluice/redis';

export const TOP_KEY_SECRET = 'watching-secret';
/** Counters per sketch on the gateways: fewer than the keys sent, so keys are turned out and the bound counts. */
export const TOP_KEYS = 16;
export const LIMIT = 30;

/** The gateways' rules; another `limit` makes another version (a gateway left behind). */
export function topRules(limit = LIMIT): CompiledRules {
  return compileRules({
    domain: 'watching',
    rules: [
      { name: 'per_key', key: ['api_key'], limit: { requests: limit, per: '60s' } },
      // Reads `route`: the adapter then builds the route descriptor, and the board counts by route.
      {
        name: 'per_key_shadow',
        match: { route: ['/search', '/export'] },
        key: ['api_key'],
        limit: { requests: 15, per: '60s' },
        mode: 'shadow',
      },
    ],
  });
}

/** The counter tag of an API key under a rule keyed by it, as the gateways hash it. */
export function tagOf(apiKey: string, rule = 'per_key'): string {
  return tagFor({ name: rule, global: false, key: ['api_key'] }, { api_key: apiKey }, TOP_KEY_SECRET)!;
}

/** `n` API keys drawn from a Zipf law (exponent `s`) over `universe` keys, by a seeded xorshift. */
export function zipfKeys(n: number, universe: number, s: number, seed: number): string[] {
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < universe; i++) {
    sum += 1 / (i + 1) ** s;
    cumulative.push(sum);
  }
  let x = seed;
  return Array.from({ length: n }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const u = ((x >>> 0) / 4294967296) * sum;
    const at = cumulative.findIndex((c) => c >= u);
    return `acct-${at < 0 ? universe - 1 : at}`;
  });
}

/** What the load sent, per API key: requests and the 429s answered. */
export interface Tally {
  readonly requests: Map<string, number>;
  readonly denied: Map<string, number>;
  readonly sent: number;
}

/** Sends each key's request to the gateways in turn, `concurrency` at a time, alternating two routes. */
export async function sendLoad(
  urls: readonly string[],
  keys: readonly string[],
  concurrency = 8,
): Promise<Tally> {
  const requests = new Map<string, number>();
  const denied = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const i = next++;
      const key = keys[i]!;
      const route = i % 2 === 0 ? '/search' : '/export';
      const response = await fetch(`${urls[i % urls.length]}${route}`, { headers: { 'x-api-key': key } });
      await response.arrayBuffer();
      requests.set(key, (requests.get(key) ?? 0) + 1);
      if (response.status === 429) denied.set(key, (denied.get(key) ?? 0) + 1);
      else if (response.status !== 200) throw new Error(`unexpected status ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, denied, sent: keys.length };
}

/** A gateway child process: its URL and how to stop it. */
export interface GatewayChild {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts test/ops/top-gateway.ts as `gateway`, on the Redis (or Cluster) at `nodes`. */
export function startGateway(
  gateway: string,
  prefix: string,
  nodes: readonly { host: string; port: number }[],
  cluster = false,
  limit = LIMIT,
): Promise<GatewayChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'top-gateway.ts'),
      gateway,
      prefix,
      nodes.map((n) => `${n.host}:${n.port}`).join(','),
      cluster ? 'cluster' : 'single',
      String(limit),
    ],
    { cwd: join(import.meta.dirname, '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`gateway ${gateway} exited with ${String(code)}`)));
    child.stdout!.on('data', (data: Buffer) => {
      const match = /listening (\d+)/.exec(data.toString());
      if (match) resolve({ url: `http://127.0.0.1:${match[1]}`, stop });
    });
  });
}

/** The boards on the store, read until the gateways' per_key counts add up to `sent` (their last publish). */
export async function boardsHolding(
  store: RedisStore,
  gateways: number,
  sent: number,
): Promise<GatewayBoard[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const boards = (await store.board.read(Date.now())).map((text) => parseBoard(text)!);
    const rule = mergeBoards(boards).rules.find((r) => r.rule === 'per_key');
    if (boards.length === gateways && rule?.requests === sent) return boards;
    if (Date.now() > deadline)
      throw new Error(
        `the board holds ${rule?.requests ?? 0} of ${sent} requests, from ${boards.length} gateways`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

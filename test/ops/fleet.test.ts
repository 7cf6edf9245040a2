/**
 * A fleet of gateways fed through Redis, as Prometheus sees it: each gateway exports the version it runs in
 * sluice_rules_info, so a push shows as one version moving to another, and a gateway left behind shows as two.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter } from '@sluice/core';
import type { RulesSource } from '@sluice/core/store';
import { type PrometheusObserver, prometheusObserver } from '@sluice/prometheus';
import { publishRules, recommendedRedisOptions, redisRules } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, type RedisServer, randomPrefix, startRedis } from '../support/redis.js';

const rulesText = (limit: number) => `domain: fleet
rules:
  - name: per_key
    key: [api_key]
    limit: {requests: ${limit}, per: 60s}
    owner: team-api
`;

let server: RedisServer;
let dir: string;
const clients: Redis[] = [];
const sources: RulesSource[] = [];

function client(port: number): Redis {
  const redis = new Redis({ host: '127.0.0.1', port, ...recommendedRedisOptions, retryStrategy: () => 100 });
  redis.on('error', () => {});
  clients.push(redis);
  return redis;
}

async function gateway(port: number, prefix: string, file?: string): Promise<PrometheusObserver> {
  const source = await redisRules(client(port), {
    domain: 'fleet',
    prefix,
    startTimeoutMs: 300,
    warn: () => {},
    ...(file ? { file } : {}),
  });
  sources.push(source);
  const metrics = prometheusObserver();
  createLimiter({ rules: source, observer: metrics });
  return metrics;
}

/** The versions of `sluice_rules_info` across the fleet's scrapes, as `count by (version)` would see them. */
async function versions(fleet: readonly PrometheusObserver[]): Promise<string[]> {
  const texts = await Promise.all(fleet.map((m) => m.metrics()));
  const found = texts.flatMap((t) => [
    ...t.matchAll(/^sluice_rules_info\{domain="fleet",version="(\w+)"\} 1$/gm),
  ]);
  return [...new Set(found.map((m) => m[1]!))].sort();
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

beforeAll(async () => {
  server = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-'));
});

afterAll(async () => {
  for (const source of sources) await source.close?.();
  for (const redis of clients) redis.disconnect();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a push moves every gateway to one version; a gateway left on its file shows as a second version', async () => {
  const prefix = randomPrefix();
  const publisher = client(server.port);
  const v1 = await publishRules(publisher, rulesText(10), { prefix });
  const fleet = [await gateway(server.port, prefix), await gateway(server.port, prefix)];
  expect(await versions(fleet)).toEqual([v1.version]);

  const v2 = await publishRules(publisher, rulesText(20), { prefix });
  await until(async () => (await versions(fleet)).join() === v2.version);

  // A gateway that cannot reach Redis at start runs its local (older) file: the fleet is on two versions.
  const file = join(dir, 'rules.yaml');
  writeFileSync(file, rulesText(10));
  const stranded = await gateway(await freePort(), prefix, file);
  expect(await versions([...fleet, stranded])).toEqual([v1.version, v2.version].sort());
  expect(await stranded.metrics()).toMatch(/^sluice_rules_reloads_total\{result="error"\} 1$/m);
});

/**
 * `sluice capacity`: the estimate from the @sluice/redis README's measured figures, and the estimate checked against
 * a measured run on a private redis-server (INFO memory, INFO commandstats, SCAN of the run's own keys).
 *
 * Stated tolerance: Redis keys exact, memory within 25% of the estimate. Script time and Redis CPU are printed beside
 * the estimate but not asserted: they are CPU time on a shared machine (timed figures; bench/redis-ops.ts and
 * bench/capacity-scale.ts measure them). The Redis CPU model is held to the run its figures come from.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CapacityEstimate as Estimate, MeasuredRun as Measured } from '@sluice/cli';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  CAPACITY_RUN,
  COALESCED_CALLS_PER_REQUEST,
  CPU_US_PER_CALL,
  MEASURED,
} from '../../packages/cli/src/capacity/figures.js';
import { type RedisServer, startRedis } from '../support/redis.js';
import { runSluice } from './fixtures/sluice.js';

const RULES = `domain: capacity_test
rules:
  - name: per_key
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: 600, per: 1m}
  - name: per_ip
    match: {}
    key: [ip]
    limit: {requests: 100, per: 1m}
    algorithm: fixed_window
  - name: per_tenant
    match: {auth: api_key}
    key: [tenant]
    limit: {requests: 100000, per: 1m}
    algorithm: token_bucket
  - name: everyone
    match: {}
    key: []
    global: true
    limit: {requests: 1000000, per: 1s}
    algorithm: gcra
  - name: local_only
    match: {}
    key: [ip]
    limit: {requests: 10, per: 1s}
    scope: local
`;

let tmp: string;
let rules: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-capacity-'));
  rules = join(tmp, 'rules.yaml');
  writeFileSync(rules, RULES);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function estimate(...args: string[]): Promise<Estimate> {
  const run = await runSluice('capacity', '--rules', rules, '--json', ...args);
  expect(run.code, run.err).toBe(0);
  return (JSON.parse(run.out) as { estimate: Estimate }).estimate;
}

describe('the estimate', () => {
  test('every rule in Redis (local scope left out): keys, memory, calls, script time, slots, primaries', async () => {
    const e = await estimate('--rps', '10000', '--keys', '100000');
    expect(e.skipped).toEqual(['local_only']);
    // per_key, per_ip and per_tenant: one key per client each; everyone: one key.
    expect(e.rules.map((r) => [r.rule, r.redisKeys, r.bytesPerKey])).toEqual([
      ['per_key', 100_000, 193],
      ['per_ip', 100_000, 192],
      ['per_tenant', 100_000, 195],
      ['everyone', 1, 193],
    ]);
    expect(e.redisKeys).toBe(300_001);
    expect(e.memoryBytes).toBe(100_000 * (193 + 192 + 195) + 193);
    // One script call per request on one Redis; on a Cluster one per slot group (api_key, ip, tenant, global).
    expect(e.callsPerSecond).toBe(10_000);
    expect(e.clusterCallsPerSecond).toBe(40_000);
    // 1.35 µs a call, then each check: new-key figures minus the call, the global key's hot-key figure (2.3).
    expect(e.scriptUsPerRequest).toBeCloseTo(
      1.35 + (6.3 - 1.35) + (6.2 - 1.35) + (6.1 - 1.35) + (2.3 - 1.35),
      5,
    );
    expect(e.scriptCoresBusy).toBeCloseTo((10_000 * e.scriptUsPerRequest) / 1e6, 9);
    expect(e.tags).toBe(300_001);
    expect(e.keysPerSlot).toBeCloseTo(300_001 / 16_384, 5);
    // 58 MB: one primary by memory; by CPU, whatever the measured run's figures say (the tests below).
    expect(e.shardsByMemory).toBe(1);
    expect(e.shardsNeeded).toBe(e.shardsByCpu);
    expect(e.hotKeys).toEqual([]);
  });

  test('a typical request picks the rules; values it gives (a tenant) are one key for everyone', async () => {
    const e = await estimate('--rps', '1000', '--keys', '5000', 'auth=anonymous');
    expect(e.rules.map((r) => r.rule)).toEqual(['per_ip', 'everyone']);
    expect(e.skipped).toEqual(['per_key', 'per_tenant', 'local_only']);
    const tenant = await estimate('--rps', '1000', '--keys', '5000', 'auth=api_key', 'tenant=acme');
    expect(tenant.rules.find((r) => r.rule === 'per_tenant')?.redisKeys).toBe(1);
    expect(tenant.rules.find((r) => r.rule === 'per_key')?.redisKeys).toBe(5000);
  });

  test('primaries by memory and by CPU; a global key past 25,000 increments a second is to be split', async () => {
    const big = await estimate('--rps', '400000', '--keys', '10000000', '--shard-memory', '1gb');
    expect(big.shardsByMemory).toBe(Math.ceil(big.memoryBytes / 1024 ** 3));
    // Past one core's share, a Cluster: at its own Redis CPU per request (a call per per-client slot group).
    expect(big.redisCores.coalesced).toBeGreaterThan(0.5);
    expect(big.shardsByCpu).toBe(Math.ceil(big.redisCores.cluster / 0.5));
    expect(big.shardsNeeded).toBe(Math.max(big.shardsByMemory, big.shardsByCpu));
    expect(big.shardsByCpu).toBeGreaterThan(1);
    expect(big.hotKeys).toEqual([{ rule: 'everyone', perSecond: 400_000, shards: 16 }]);
    const text = await runSluice('capacity', '--rules', rules, '--rps', '400000', '--keys', '10000000');
    expect(text.out).toContain(
      'hot key: everyone takes 400,000 increments/s on one key; split it with shards: 16',
    );
    expect(text.out).toMatch(
      /primaries\s+\d+ \(CPU: \d+ at 50% of a core each; memory: \d+ at 4\.0 GB each\)/,
    );
  });

  test('Redis CPU: the source example gives back the run it was measured in (figures.ts, CAPACITY_RUN)', async () => {
    const sourceRules = join(tmp, 'source.yaml');
    writeFileSync(
      sourceRules,
      `domain: public_api
rules:
  - {name: key_default, match: {auth: api_key}, key: [api_key], limit: {requests: 600, per: 60s}}
  - {name: search_global, match: {route: /search}, key: [], global: true, limit: {requests: 5000, per: 1s}, algorithm: token_bucket}
`,
    );
    const run = async (route: string) => {
      const out = await runSluice(
        'capacity',
        '--rules',
        sourceRules,
        '--rps',
        '50000',
        '--keys',
        '200000',
        'auth=api_key',
        `route=${route}`,
        '--json',
      );
      expect(out.code, out.err).toBe(0);
      return (JSON.parse(out.out) as { estimate: Estimate }).estimate;
    };
    // The run's requests: every one on key_default, half of them on /search too.
    const [items, search] = [await run('/items'), await run('/search')];
    expect(items.rules.map((r) => r.rule)).toEqual(['key_default']);
    expect(search.rules.map((r) => r.rule)).toEqual(['key_default', 'search_global']);
    const mean = (pick: (e: Estimate) => number) => (pick(items) + pick(search)) / 2;
    expect(mean((e) => e.redisCpu.coalesced)).toBeCloseTo(MEASURED.coalesced.cpuUsPerRequest, 6);
    expect(mean((e) => e.redisCpu.uncoalesced)).toBeCloseTo(MEASURED.uncoalesced.cpuUsPerRequest, 6);
    // On a Cluster the per-key check goes in a call of its own (its own slot); the /search checks, all on one key,
    // coalesce.
    expect(search.redisCpu.cluster).toBeCloseTo(
      search.redisCpu.uncoalesced + CPU_US_PER_CALL * COALESCED_CALLS_PER_REQUEST,
      6,
    );
    expect(items.redisCpu.cluster).toBeCloseTo(items.redisCpu.uncoalesced, 6);
    expect(search.redisCores.coalesced).toBeCloseTo((50_000 * search.redisCpu.coalesced) / 1e6, 9);
    const text = await runSluice('capacity', '--rules', sourceRules, '--rps', '50000', '--keys', '200000');
    expect(text.out).toMatch(/Redis CPU\s+[\d.]+ µs per request on one server, calls coalesced/);
    expect(text.out).toContain(
      `Redis CPU is extrapolated, linear in the rate, from the server CPU per check and per call measured in ${CAPACITY_RUN}`,
    );
  });

  test('primaries for CPU: one while a coalescing server stays under the share', async () => {
    const small = await estimate('--rps', '100', '--keys', '1000');
    expect(small.redisCores.coalesced).toBeLessThan(0.5);
    expect(small.shardsByCpu).toBe(1);
  });

  test('a sliding_log key grows with the requests of its window, up to the limit', async () => {
    const logRules = join(tmp, 'log.yaml');
    writeFileSync(
      logRules,
      'domain: d\nrules:\n  - {name: logins, match: {}, key: [ip], limit: {requests: 200, per: 1m}, algorithm: sliding_log}\n',
    );
    const run = async (rps: string) => {
      const out = await runSluice('capacity', '--rules', logRules, '--rps', rps, '--keys', '100', '--json');
      return (JSON.parse(out.out) as { estimate: Estimate }).estimate.rules[0]?.bytesPerKey;
    };
    // 1 request a minute per key: one entry. 100/s over 100 keys = 60 a minute each: 60 entries of ~30 B.
    // 1000/s: 600 a minute each, capped at the limit (200): 128 small entries, then ~125 B each.
    expect(await run('1')).toBe(214);
    expect(await run('100')).toBe(214 + 30 * 59);
    expect(await run('1000')).toBe(214 + 30 * 127 + 125 * 72);
  });

  test('ban state keys (one per client key) and idempotency markers (charged requests within idempotent)', async () => {
    const policyRules = join(tmp, 'policies.yaml');
    writeFileSync(
      policyRules,
      `domain: d
rules:
  - {name: login, match: {}, key: [ip], limit: {requests: 5, per: 1m}, ban: {after: 5, within: 10m, for: 15m}}
  - {name: orders, match: {}, key: [ip], limit: {requests: 100, per: 1m}, idempotent: 10m}
  - {name: few_orders, match: {}, key: [ip], limit: {requests: 2, per: 1h}, idempotent: 10m}
  - {name: plain, match: {}, key: [ip], limit: {requests: 100, per: 1m}, algorithm: fixed_window}
`,
    );
    const run = await runSluice(
      'capacity',
      '--rules',
      policyRules,
      '--rps',
      '100',
      '--keys',
      '1000',
      '--json',
    );
    const e = (JSON.parse(run.out) as { estimate: Estimate }).estimate;
    expect(e.rules.map((r) => [r.rule, r.redisKeys, r.banKeys, r.markerKeys])).toEqual([
      ['login', 1000, 1000, 0],
      // 100 charged requests a second live 10 minutes: 60,000 markers (the keys' limits allow more).
      ['orders', 1000, 0, 60_000],
      // 2 an hour per key: at most 2 markers per key whatever the rate.
      ['few_orders', 1000, 0, 2000],
      ['plain', 1000, 0, 0],
    ]);
    expect(e.redisKeys).toBe(4000 + 1000 + 60_000 + 2000);
    const login = e.rules[0]!;
    expect(login.memoryBytes).toBe(1000 * login.bytesPerKey + 1000 * 225);
    expect(e.rules[1]!.memoryBytes).toBe(1000 * e.rules[1]!.bytesPerKey + 60_000 * 193);
    // Ban states and markers share their counter's hash tag: one tag per client.
    expect(e.tags).toBe(1000);
    const text = await runSluice('capacity', '--rules', policyRules, '--rps', '100', '--keys', '1000');
    expect(text.out).toContain(
      '  login also holds up to 1,000 ban state keys (225 B each), in memory and keys below',
    );
    expect(text.out).toContain('  orders also holds up to 60,000 idempotency markers (193 B each)');
    expect(text.out).not.toContain('plain also holds');
  });

  test('usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [['capacity', '--rps', '10', '--keys', '10'], /needs --rules/],
      [['capacity', '--rules', rules, '--keys', '10'], /needs --rps/],
      [['capacity', '--rules', rules, '--rps', '10', '--keys', '0'], /--keys must be a whole number/],
      [
        ['capacity', '--rules', rules, '--rps', '10', '--keys', '10', '--shard-memory', 'lots'],
        /--shard-memory must be a size/,
      ],
      [
        ['capacity', '--rules', rules, '--rps', '10', '--keys', '10', '--cpu-share', '2'],
        /--cpu-share must be above 0/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await runSluice(...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.err).toMatch(message);
    }
  });
});

describe('against a measured run on a real redis-server', () => {
  let server: RedisServer;
  // A fresh server per run: used_memory grows in steps when Redis resizes its key table, so a run on a server an
  // earlier run already filled would see a different step than the estimate assumes.
  beforeEach(async () => {
    server = await startRedis();
  });
  afterEach(async () => {
    await server?.stop();
  });

  /** `sluice capacity --measure` on the private server with a sample of `keys` clients. */
  function measureOn(keys: number, ...extra: string[]) {
    const url = `redis://${server.host}:${server.port}`;
    return runSluice(
      'capacity',
      '--rules',
      rules,
      '--rps',
      '1000',
      '--keys',
      '100000',
      '--measure',
      url,
      '--sample-keys',
      String(keys),
      ...extra,
    );
  }

  async function measured(...descriptors: string[]) {
    const run = await measureOn(3000, '--json', ...descriptors);
    expect(run.code, run.err).toBe(0);
    return JSON.parse(run.out) as { measured: Measured; estimateForSample: Estimate };
  }

  test.each([
    ['an API client of one tenant (per key, per IP, per tenant, global)', ['auth=api_key', 'tenant=acme']],
    ['an anonymous client (per IP, global)', ['auth=anonymous']],
  ])(
    '%s: keys exact, memory within a quarter, at most one script call per request',
    async (_name, descriptors) => {
      const { measured: run, estimateForSample: e } = await measured(...descriptors);
      expect(run.requests).toBe(15_000);
      expect(run.redisKeys).toBe(e.redisKeys);
      expect(run.memoryBytes / e.memoryBytes).toBeGreaterThan(0.75);
      expect(run.memoryBytes / e.memoryBytes).toBeLessThan(1.25);
      expect(run.calls).toBeGreaterThan(0);
      expect(run.calls).toBeLessThanOrEqual(run.requests);
      expect(run.scriptUs).toBeGreaterThan(0);
      // The server's whole CPU: at least its scripts' time, give or take INFO cpu's 1 ms steps.
      expect(run.cpuUs).toBeGreaterThan(0);
    },
    120_000,
  );

  test('the run deletes its keys and prints measured beside estimated', async () => {
    const text = await measureOn(500);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(
      `measured on redis://${server.host}:${server.port}: 500 keys, 2500 requests, 64 in flight`,
    );
    // No descriptors: the sample's clients have an IP and an API key (per_key, per_ip) and share the global key.
    expect(text.out).toMatch(/Redis keys\s+1,001\s+1,001\s+1\.00/);
    expect(text.out).toMatch(/Redis CPU µs per request\s+[\d.]+\s+[\d.]+\s+[\d.]+/);
    const { Redis } = await import('ioredis');
    const admin = new Redis({ host: server.host, port: server.port });
    try {
      expect(await admin.dbsize()).toBe(0);
    } finally {
      admin.disconnect();
    }
  }, 120_000);

  test('an unreachable Redis is a finding with the URL, password hidden', async () => {
    const run = await runSluice(
      'capacity',
      '--rules',
      rules,
      '--rps',
      '10',
      '--keys',
      '10',
      '--measure',
      'redis://:secret@127.0.0.1:1',
    );
    expect(run.code).toBe(1);
    expect(run.err).toContain('redis://:***@127.0.0.1:1');
    expect(run.err).not.toContain('secret');
  });
});

/** The CLI and rule policies: `sluice unban`, `sluice explain` with ban state, `sluice test` expecting bans. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileRules, createLimiter, loadRules } from '@sluice/core';
import { factorKey, RedisStore } from '@sluice/redis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomPrefix, redisSuite, scanKeys } from '../support/redis.js';
import { runSluice } from './fixtures/sluice.js';

const redis = redisSuite();
let dir: string;
let file: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-unban-'));
  file = join(dir, 'rules.yaml');
  writeFileSync(
    file,
    `domain: logins
rules:
  - name: login
    owner: team-auth
    key: [tenant, ip]
    algorithm: fixed_window
    limit: {requests: 1, per: 1m}
    ban: {after: 1, within: 1m, for: 1h}
  - name: plain
    owner: team-auth
    key: [ip]
    limit: {requests: 100, per: 1m}
  - name: payments
    owner: team-auth
    match: {route: /pay}
    global: true
    limit: {requests: 500, per: 1s}
    adaptive: {error_rate: 5%, floor: 0.2}
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A gateway on the suite's server whose key (tenant acme, ip) is banned by `login`. */
async function bannedGateway(prefix: string, ip: string) {
  const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
  let now = 0;
  const limiter = createLimiter({ rules: compileRules(await loadRules(file)), store, clock: () => now });
  const key = { tenant: 'acme', ip };
  await limiter.check(key);
  expect((await limiter.check(key)).reason).toBe('ban');
  return {
    check: () => limiter.check(key),
    wait: (ms: number) => (now += ms),
    close: () => limiter.close(),
  };
}

const url = () => `redis://${redis.server.host}:${redis.server.port}`;

describe('sluice explain --redis', () => {
  test('shows the rule ban policy and the key ban state, read from Redis', async () => {
    const prefix = randomPrefix('explain');
    const gateway = await bannedGateway(prefix, '192.0.2.7');
    const args = [file, 'tenant=acme', 'ip=192.0.2.7', '--prefix', prefix, '--at', '1970-01-01T00:00:00Z'];
    const run = await runSluice('explain', ...args, '--redis', url());
    expect(run.code).toBe(0);
    expect(run.out).toContain('    ban        after 1 denials within 1m: 1h\n');
    expect(run.out).toContain('    ban state  banned until 1970-01-01T01:00:00.000Z (ban 1 of this key)');
    const other = await runSluice(
      'explain',
      file,
      'tenant=acme',
      'ip=192.0.2.8',
      '--prefix',
      prefix,
      '--redis',
      url(),
    );
    expect(other.out).toContain('    ban state  not banned, no violations counted');
    const json = JSON.parse((await runSluice('explain', ...args, '--redis', url(), '--json')).out);
    expect(json.banStates).toEqual({ login: 'banned until 1970-01-01T01:00:00.000Z (ban 1 of this key)' });
    // Without --redis: the policy, no state.
    expect((await runSluice('explain', ...args)).out).not.toContain('ban state');
    await gateway.close();
  });
});

describe('sluice explain --redis, adaptive', () => {
  test('shows the live factor the fleet shares in Redis, and the limit it makes', async () => {
    const prefix = randomPrefix('explain');
    const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
    const limiter = createLimiter({ rules: compileRules(await loadRules(file)), store });
    const args = [file, 'route=/pay', '--prefix', prefix, '--redis', url()];
    // No gateway has reported: the factor is 1.
    expect((await runSluice('explain', ...args)).out).toContain('    factor     1: the full limit\n');
    // A breaker opens: the gateway writes the floor to the shared factor at once.
    limiter.setBreaker('payments', 'open');
    const key = factorKey(prefix, 'logins/payments');
    for (let i = 0; i < 200 && (await redis.admin.hget(key, 'f')) !== '0.20000000000000001'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const run = await runSluice('explain', ...args);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('    factor     0.2: limit now 100 per 1s (of 500)\n');
    expect(JSON.parse((await runSluice('explain', ...args, '--json')).out).adaptiveFactors).toEqual({
      payments: 0.2,
    });
    // Without --redis nothing is read; a rule without adaptive shows no factor.
    expect((await runSluice('explain', file, 'route=/pay', '--prefix', prefix)).out).not.toContain('factor');
    const plain = await runSluice('explain', file, 'ip=192.0.2.7', '--prefix', prefix, '--redis', url());
    expect(plain.out).not.toContain('factor');
    await limiter.close();
  });
});

describe('sluice unban', () => {
  test('with the rules file: lifts the ban of the key, printing its hash, never the values', async () => {
    const prefix = randomPrefix('unban');
    const gateway = await bannedGateway(prefix, '203.0.113.9');
    const args = ['--rule', 'login', '--key', 'ip=203.0.113.9', '--key', 'tenant=acme', '--redis', url()];
    const run = await runSluice('unban', file, ...args, '--prefix', prefix);
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(run.out).toMatch(/^lifted the ban of rule login for key [\w-]{22} in redis:\/\/127\.0\.0\.1:\d+$/);
    expect(run.out).not.toContain('203.0.113.9');
    expect((await scanKeys(redis.admin, prefix)).filter((key) => key.endsWith(':ban'))).toEqual([]);
    // A minute on, the window is over and the hour-long ban is gone: allowed.
    gateway.wait(60_000);
    expect((await gateway.check()).allowed).toBe(true);
    const again = await runSluice('unban', file, ...args, '--prefix', prefix);
    expect(again.out).toContain('had no ban');
    await gateway.close();
  });

  test('without the rules file: the --key descriptors in the order of the rule key', async () => {
    const prefix = randomPrefix('unban');
    const gateway = await bannedGateway(prefix, '198.51.100.4');
    const keys = ['--key', 'tenant=acme', '--key', 'ip=198.51.100.4'];
    const run = await runSluice('unban', '--rule', 'login', ...keys, '--redis', url(), '--prefix', prefix);
    expect(run.out).toMatch(/^lifted the ban/);
    await gateway.close();
  });

  test('usage errors: no --rule, no --key, a rule without ban, a missing key descriptor', async () => {
    const base = ['--redis', url()];
    expect((await runSluice('unban', '--key', 'ip=1', ...base)).code).toBe(2);
    const noKey = await runSluice('unban', '--rule', 'login', ...base);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toContain('unban needs --key descriptor=value, or --global');
    const plain = await runSluice('unban', file, '--rule', 'plain', '--key', 'ip=1', ...base);
    expect(plain.err).toContain('rule plain has no ban');
    const missing = await runSluice('unban', file, '--rule', 'login', '--key', 'ip=1', ...base);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('rule login is keyed on tenant: give --key tenant=<value>');
  });
});

describe('sluice test', () => {
  test('a case can expect a ban (banned: true), and a wrong expectation shows as a diff', async () => {
    const cases = join(dir, 'cases.yaml');
    writeFileSync(
      cases,
      `cases:
  - name: a second login within the minute is banned for an hour
    descriptors: {tenant: acme, ip: 203.0.113.9}
    steps:
      - {requests: 1, expect: allowed}
      - {at: 1s, expect: {denied: 1, rule: login, retry_after: 1h, banned: true}}
      - {at: 2m, expect: {denied: 1, banned: true}}
      - {at: 61m, expect: {allowed: 1}}
`,
    );
    expect(await runSluice('test', file, cases)).toMatchObject({ code: 0 });
    writeFileSync(
      cases,
      `cases:
  - name: expects no ban
    descriptors: {tenant: acme, ip: 203.0.113.9}
    steps:
      - {requests: 1, expect: allowed}
      - {at: 1s, expect: {denied: 1, banned: false}}
`,
    );
    const failed = await runSluice('test', file, cases);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('- banned: false\n');
    expect(failed.out).toContain('+ banned: true');
  });
});

describe('sluice explain --redis, escalation stages', () => {
  test("shows the rule's stages and the stage a key's violations put it in", async () => {
    const staged = join(dir, 'staged.yaml');
    writeFileSync(
      staged,
      `domain: api
rules:
  - name: api
    owner: team-api
    key: [ip]
    algorithm: fixed_window
    limit: {requests: 1, per: 1m}
    warn_at: 80%
    ban: {after: 5, within: 10m, for: 1h}
    challenge: {after: 2, difficulty: 12, pass: 3, for: 30s}
`,
    );
    const prefix = randomPrefix('stages');
    const store = new RedisStore({ client: redis.client, prefix, timeoutMs: 5000, breaker: false });
    const limiter = createLimiter({ rules: compileRules(await loadRules(staged)), store, clock: () => 0 });
    const args = (ip: string) => [staged, `ip=${ip}`, '--prefix', prefix, '--at', '1970-01-01T00:00:01Z'];
    for (let i = 0; i < 4; i++) await limiter.check({ ip: '192.0.2.7' });
    for (let i = 0; i < 2; i++) await limiter.check({ ip: '192.0.2.8' });
    const run = await runSluice('explain', ...args('192.0.2.7'), '--redis', url());
    expect(run.code).toBe(0);
    expect(run.out).toContain('    warn at    80% of the limit\n');
    expect(run.out).toContain(
      '    challenge  from violation 2: 12 bits, one more each violation after; a solution passes 3 requests for 30s\n',
    );
    expect(run.out).toContain('    stage      challenge (3 violation(s); the ban at 5)\n');
    const limited = await runSluice('explain', ...args('192.0.2.8'), '--redis', url());
    expect(limited.out).toContain('    stage      limit (1 violation(s); challenge at 2, ban at 5)\n');
    const fresh = await runSluice('explain', ...args('192.0.2.9'), '--redis', url(), '--json');
    expect(JSON.parse(fresh.out).stages).toEqual({ api: 'none (no violations counted)' });
    await limiter.close();
  });
});

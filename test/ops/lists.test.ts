/**
 * `--list name=file` on the commands that build a limiter (test, replay, simulate, explain, capacity), run as a
 * user runs them (a subprocess): rules that name lists read them from files, and a list the rules name but not
 * given is empty, with a warning, instead of failing the command.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CapacityEstimate, ComparisonReport, MeasuredRun, ReplayReport } from '@sluice/cli';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type RedisServer, startRedis } from '../support/redis.js';
import { timeLocal } from './fixtures/make-logs.js';
import { sluiceProcess as sluice } from './fixtures/sluice.js';

const LIMIT_RULES = `domain: api
rules:
  - name: per_ip
    owner: t
    key: [ip]
    limit: {requests: 100, per: 1m}
  - name: partners
    owner: t
    match: {tenant: {list: partners}}
    key: [tenant]
    limit: {requests: 1000, per: 1m}
`;
const RULES = `${LIMIT_RULES}  - name: blocked
    owner: t
    match: {ip: {list: blocked_ips}}
    action: deny
`;

const CASES = `start: 2026-01-05T00:00:00Z
cases:
  - name: a listed address is refused
    descriptors: {ip: 198.51.100.4}
    expect: {denied: 1, rule: blocked, retry_after: never}
  - name: another address is counted
    descriptors: {ip: 192.0.2.1}
    requests: 101
    expect: {allowed: 100, denied: 1, rule: per_ip}
`;

const START = Date.parse('2026-01-05T09:00:00Z');
const BLOCKED_IP = '198.51.100.4';

/** 10 requests from the blocked address among 20 from others, a second apart, in combined format. */
function accessLog(): string {
  return Array.from({ length: 30 }, (_, i) => {
    const ip = i % 3 === 0 ? BLOCKED_IP : `192.0.2.${i}`;
    return `${ip} - - [${timeLocal(START + i * 1000)}] "GET /search HTTP/1.1" 200 512 "-" "curl/8"`;
  }).join('\n');
}

let tmp: string;
const path = (name: string) => join(tmp, name);
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-lists-'));
  writeFileSync(path('rules.yaml'), RULES);
  writeFileSync(path('limit-rules.yaml'), LIMIT_RULES);
  writeFileSync(path('cases.yaml'), CASES);
  writeFileSync(path('access.log'), `${accessLog()}\n`);
  writeFileSync(path('blocked.txt'), `# abusers\n${BLOCKED_IP}\n203.0.113.0/24\n`);
  writeFileSync(path('ten.txt'), '10.0.0.0/8\n');
  writeFileSync(path('partners.txt'), 'acme\n');
  writeFileSync(path('bad.txt'), '203.0.113.0/24\n10.0.0.1/8\n');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const MISSING_WARNING = (command: string, names: string) =>
  `sluice ${command}: warning: the rules name the lists ${names}, not given (--list name=file): empty here, matching nothing`;

function parsed<T>(run: { code: number; stdout: string; stderr: string }): T {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

function denialsOf(report: ReplayReport, rule: string): number | undefined {
  return report.rules.find((r) => r.rule === rule)?.denied;
}

describe('sluice test --list', () => {
  test('a listed address is refused by the deny rule', async () => {
    const run = await sluice(
      'test',
      path('rules.yaml'),
      path('cases.yaml'),
      '--list',
      `blocked_ips=${path('blocked.txt')}`,
      '--list',
      `partners=${path('partners.txt')}`,
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('ok    a listed address is refused');
    expect(run.stdout).toContain('2 cases passed, 0 failed');
    expect(run.stderr).toBe('');
  }, 120_000);

  test('lists not given are empty: the cases run, with a warning, and the deny case fails', async () => {
    const run = await sluice('test', path('rules.yaml'), path('cases.yaml'));
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(MISSING_WARNING('test', 'partners, blocked_ips'));
    expect(run.stdout).toContain('FAIL  a listed address is refused');
    expect(run.stdout).toContain('ok    another address is counted');
  }, 120_000);
});

describe('sluice replay --list', () => {
  test('the blocked address is denied by the deny rule, the others counted', async () => {
    const report = parsed<ReplayReport>(
      await sluice(
        'replay',
        path('access.log'),
        '--rules',
        path('rules.yaml'),
        '--list',
        `blocked_ips=${path('blocked.txt')}`,
        '--json',
      ),
    );
    expect(report.requests).toBe(30);
    expect(report.denied).toBe(10);
    expect(denialsOf(report, 'blocked')).toBe(10);
    expect(denialsOf(report, 'per_ip')).toBe(0);
  }, 120_000);

  test('without the list the replay runs, says which lists are empty, and denies nothing', async () => {
    const run = await sluice('replay', path('access.log'), '--rules', path('rules.yaml'), '--json');
    const report = parsed<ReplayReport>(run);
    expect(run.stderr.trim()).toBe(MISSING_WARNING('replay', 'partners, blocked_ips'));
    expect(report.requests).toBe(30);
    expect(report.denied).toBe(0);
  }, 120_000);

  test('--compare: adding the deny list changes the blocked address from allowed to denied', async () => {
    const run = await sluice(
      'replay',
      path('access.log'),
      '--compare',
      path('limit-rules.yaml'),
      path('rules.yaml'),
      '--list',
      `blocked_ips=${path('blocked.txt')}`,
      '--list',
      `partners=${path('partners.txt')}`,
      '--json',
    );
    const report = parsed<ComparisonReport>(run);
    expect(run.stderr).toBe('');
    expect(report.changed).toBe(10);
    expect(report.transitions).toEqual([{ from: 'allowed', to: 'denied', count: 10 }]);
    expect(report.rules.find((r) => r.rule === 'blocked')).toMatchObject({ status: 'added', changed: 10 });
  }, 120_000);
});

describe('sluice simulate --list', () => {
  const simulate = (...extra: string[]) =>
    sluice(
      'simulate',
      '--rules',
      path('rules.yaml'),
      '--pattern',
      'steady',
      '--duration',
      '30s',
      '--rps',
      '10',
      '--keys',
      '20',
      '--vary',
      'ip',
      '--json',
      ...extra,
    );

  test('clients (10.x addresses) on the block list are all denied by it', async () => {
    const { report } = parsed<{ report: ReplayReport }>(
      await simulate(
        '--list',
        `blocked_ips=${path('ten.txt')}`,
        '--list',
        `partners=${path('partners.txt')}`,
      ),
    );
    expect(report.requests).toBeGreaterThan(0);
    expect(report.denied).toBe(report.requests);
    expect(denialsOf(report, 'blocked')).toBe(report.requests);
  }, 120_000);

  test('without it the run counts them as usual, with the warning', async () => {
    const run = await simulate();
    const { report } = parsed<{ report: ReplayReport }>(run);
    expect(run.stderr.trim()).toBe(MISSING_WARNING('simulate', 'partners, blocked_ips'));
    expect(report.requests).toBeGreaterThan(0);
    expect(denialsOf(report, 'blocked')).toBe(0);
  }, 120_000);
});

describe('sluice explain --list', () => {
  test('a listed address is decided by the deny rule; the list not given is named as unread', async () => {
    const run = await sluice(
      'explain',
      path('rules.yaml'),
      `ip=${BLOCKED_IP}`,
      '--list',
      `blocked_ips=${path('blocked.txt')}`,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('decided by deny rule blocked: nothing is counted');
    expect(run.stdout).toContain('lists not read by explain (they match nothing here): partners\n');
    expect(run.stderr.trim()).toBe(
      'sluice explain: warning: the rules name the list partners, not given (--list name=file): empty here, matching nothing',
    );
  }, 120_000);

  test('without --list the address is not on any list', async () => {
    const run = await sluice('explain', path('rules.yaml'), `ip=${BLOCKED_IP}`);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('decided by');
    expect(run.stdout).toContain(
      'lists not read by explain (they match nothing here): partners, blocked_ips',
    );
  }, 120_000);
});

describe('sluice capacity --list', () => {
  /** A typical request of tenant acme at 1,000 requests/s over 100 clients. */
  const capacity = (...extra: string[]) =>
    sluice(
      'capacity',
      '--rules',
      path('rules.yaml'),
      '--rps',
      '1000',
      '--keys',
      '100',
      'tenant=acme',
      ...extra,
    );
  const estimate = async (...extra: string[]) =>
    parsed<{ estimate: CapacityEstimate }>(await capacity('--json', ...extra)).estimate;

  test('a rule matching a listed tenant is sized only when the list holds the tenant; deny rules never', async () => {
    const listed = await estimate('--list', `partners=${path('partners.txt')}`);
    expect(listed.rules.map((r) => r.rule)).toEqual(['per_ip', 'partners']);
    expect(listed.skipped).toEqual(['blocked']);
    const unlisted = await estimate();
    expect(unlisted.rules.map((r) => r.rule)).toEqual(['per_ip']);
    expect(unlisted.skipped).toEqual(['partners', 'blocked']);
  }, 120_000);

  describe('--measure on a real redis-server', () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await startRedis();
    });
    afterAll(async () => {
      await server?.stop();
    });

    test('the measured run builds its limiter with the lists: keys as estimated', async () => {
      const run = await capacity(
        '--measure',
        `redis://${server.host}:${server.port}`,
        '--sample-keys',
        '200',
        '--list',
        `partners=${path('partners.txt')}`,
        '--list',
        `blocked_ips=${path('blocked.txt')}`,
        '--json',
      );
      const { measured, estimateForSample } = parsed<{
        measured: MeasuredRun;
        estimateForSample: CapacityEstimate;
      }>(run);
      // per_ip: one key per sampled client; partners: one key for the tenant.
      expect(estimateForSample.redisKeys).toBe(201);
      expect(measured.redisKeys).toBe(estimateForSample.redisKeys);
      expect(measured.requests).toBe(1000);
    }, 120_000);
  });
});

describe('bad --list arguments', () => {
  test('a bad line is placed (file:line:column) and the command does not run', async () => {
    const run = await sluice(
      'explain',
      path('rules.yaml'),
      'ip=1.2.3.4',
      '--list',
      `blocked_ips=${path('bad.txt')}`,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${path('bad.txt')}:2:1 `);
    expect(run.stderr).toContain('did you mean 10.0.0.0/8?');
    expect(run.stdout).toBe('');
  }, 120_000);

  test.each([
    [['--list', 'blocked_ips'], '--list takes name=file, got "blocked_ips"'],
    [['--list', '=x.txt'], '--list takes name=file, got "=x.txt"'],
    [['--list', 'a=x', '--list', 'a=y'], '--list a is given twice'],
    [['--list', 'blocked_ips=/nonexistent/list.txt'], '/nonexistent/list.txt: no such file'],
  ])(
    '%j: exit 2 with the reason',
    async (extra, message) => {
      const run = await sluice('test', path('rules.yaml'), path('cases.yaml'), ...extra);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
    },
    60_000,
  );

  test('a list no rule names is warned about (a typo would leave the named one empty)', async () => {
    const run = await sluice(
      'test',
      path('rules.yaml'),
      path('cases.yaml'),
      '--list',
      `blocked_ipz=${path('blocked.txt')}`,
    );
    expect(run.stderr).toContain('sluice test: warning: --list blocked_ipz: no rule names this list');
    expect(run.stderr).toContain(MISSING_WARNING('test', 'partners, blocked_ips'));
  }, 120_000);

  test('every command that builds a limiter documents --list', async () => {
    const names = ['test', 'replay', 'simulate', 'explain', 'capacity'];
    const runs = await Promise.all(names.map((name) => sluice(name, '--help')));
    for (const run of runs) expect(run.stdout).toMatch(/\n {2}--list <name=file> +a list the rules name/);
  }, 240_000);
});

/**
 * `sluice replay` on generated logs (test/ops/fixtures/make-logs.ts, seeded): the command as a user runs it
 * (main() with captured output; a real terminal for the progress line), plain and gzip files, several logs merged
 * by time, JSON reports checked against what the generator put in the logs.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ComparisonReport, ReplayReport } from '@sluice/cli';
import { compileRules, loadRules, tagFor } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeLogs } from './fixtures/make-logs.js';
import { runSluice } from './fixtures/sluice.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'replay');
const RULES = join(FIXTURES, 'rules.yaml');
const RULES_NEW = join(FIXTURES, 'rules-new.yaml');
/** The generator appends the API key and tenant as quoted fields; JSON logs nest them under headers. */
const FIELDS = [
  '--field',
  'api_key=extra.1',
  '--field',
  'tenant=extra.2',
  '--field',
  'tenant=headers.x-tenant',
];

async function json<T>(...args: string[]): Promise<T> {
  const run = await runSluice(...args, '--json');
  expect(run.code, run.err).toBe(0);
  return JSON.parse(run.out) as T;
}

let tmp: string;
let log: string;
let jsonl: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-replay-'));
  writeLogs(tmp, 4000);
  log = join(tmp, 'access.log');
  jsonl = join(tmp, 'access.jsonl');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sluice replay', () => {
  test('per rule: matched, denials, keys (the scraper first, the IPv6 /64 as one key), hours, accuracy', async () => {
    const report = await json<ReplayReport>('replay', log, '--rules', RULES, ...FIELDS);
    const rules = compileRules(await loadRules(RULES));
    const byName = (name: string) => report.rules.find((r) => r.rule === name);
    const compiled = (name: string) => rules.rules.find((r) => r.name === name)!;
    // 4000 generated requests, one garbled line (the blank line is not counted).
    expect(report).toMatchObject({ requests: 4000, unreadable: 1, outOfOrder: 0 });
    expect(report.logged429).toBeGreaterThan(0);
    const search = byName('search_per_ip')!;
    expect(search.topKeys[0]?.key).toBe(tagFor(compiled('search_per_ip'), { ip: '203.0.113.66' }));
    expect(search.denied).toBeGreaterThan(0);
    expect(search.denied).toBeLessThanOrEqual(report.denied);
    expect(search.deniedPerHour.reduce((a, b) => a + b, 0)).toBe(search.denied);
    expect(search.retryAfter.reduce((a, b) => a + b, 0)).toBe(search.denied);
    const v6 = tagFor(compiled('anon_fixed'), { ip: '2001:db8:5:7::/64' });
    const anon = byName('anon_fixed')!;
    expect(anon.mode).toBe('shadow');
    expect(anon.denied).toBe(0);
    expect(anon.topKeys.map((k) => k.key)).toContain(v6);
    // The fixed window lets the hopping IPv6 client past its limit at window boundaries: false allows.
    expect(anon.accuracy?.falseAllows).toBeGreaterThan(0);
    expect(anon.accuracy?.peak).toBeGreaterThan(anon.limit);
    expect(byName('key_default')?.distinctKeys).toBe(4);
    expect(byName('tenant_burst')?.accuracy).toBeUndefined();
  });

  test('gzip input gives the same report; several logs merge by time', async () => {
    const gz = join(tmp, 'access.log.1.gz');
    writeFileSync(gz, gzipSync(readFileSync(log)));
    const plain = await json<ReplayReport>('replay', log, '--rules', RULES, ...FIELDS);
    expect(await json<ReplayReport>('replay', gz, '--rules', RULES, ...FIELDS)).toEqual(plain);
    const both = await json<ReplayReport>('replay', log, jsonl, '--rules', RULES, ...FIELDS);
    // 3000 JSON requests and two garbled lines; the files overlap in time but are read as one ordered stream.
    expect(both).toMatchObject({ requests: 7000, unreadable: 3, outOfOrder: 0 });
    expect(both.rules.find((r) => r.rule === 'key_default')?.distinctKeys).toBe(4);
  });

  test('text report: keys hashed unless --show-keys; no IP or API key in clear otherwise', async () => {
    const hashed = await runSluice('replay', log, jsonl, '--rules', RULES, ...FIELDS, '--top', '3');
    expect(hashed.code).toBe(0);
    expect(hashed.out).toContain('7000 requests');
    expect(hashed.out).toMatch(/accuracy against the exact sliding log \(1m/);
    expect(hashed.out).toMatch(/false allows, \d+ false denials/);
    expect(hashed.out).toContain('Retry-After of denials');
    expect(hashed.out).not.toMatch(/203\.0\.113\.66|k_live_|2001:db8/);
    const clear = await runSluice('replay', log, '--rules', RULES, ...FIELDS, '--top', '3', '--show-keys');
    expect(clear.out).toContain('ip=203.0.113.66');
  });

  test('--compare: requests whose outcome changes, by rule and key; a version against itself changes nothing', async () => {
    const report = await json<ComparisonReport>('replay', log, '--compare', RULES, RULES_NEW, ...FIELDS);
    const rules = compileRules(await loadRules(RULES_NEW));
    const search = report.rules.find((r) => r.rule === 'search_per_ip');
    expect(report.changed).toBeGreaterThan(0);
    expect(report.new.denied).toBeLessThan(report.old.denied);
    expect(search?.status).toBe('changed');
    expect(search?.transitions[0]).toMatchObject({ from: 'denied', to: 'allowed' });
    expect(search?.topKeys[0]?.key).toBe(tagFor(rules.rules[0]!, { ip: '203.0.113.66' }));
    expect(report.rules.find((r) => r.rule === 'tenant_burst')?.status).toBe('removed');
    const same = await json<ComparisonReport>('replay', log, '--compare', RULES, RULES, ...FIELDS);
    expect(same.changed).toBe(0);
    expect(same.rules.every((r) => r.changed === 0)).toBe(true);
    const text = await runSluice('replay', log, '--compare', RULES, RULES_NEW, ...FIELDS);
    expect(text.out).toMatch(/\d+ of 4000 requests change outcome/);
    expect(text.out).toContain('search_per_ip: keys with the most changed outcomes');
  });

  test('usage errors exit 2 and say what is wrong; invalid rules exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [['replay', '--rules', RULES], /at least one log file/],
      [['replay', log], /needs --rules/],
      [['replay', log, '--compare', RULES], /--compare needs two rules files/],
      [['replay', log, '--rules', RULES, '--compare', RULES, RULES_NEW], /not both/],
      [
        ['replay', log, '--rules', RULES, '--format', 'csv'],
        /--format must be one of auto, combined, json, decisions/,
      ],
      [['replay', log, '--rules', RULES, '--field', 'tenant'], /--field must be name=path/],
      [['replay', log, '--rules', RULES, '--ipv6-subnet', '200'], /--ipv6-subnet must be 1 to 128/],
      [['replay', join(tmp, 'missing.log'), '--rules', RULES], /missing\.log: no such file/],
    ];
    for (const [args, message] of cases) {
      const run = await runSluice(...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.err).toMatch(message);
    }
    const broken = await runSluice(
      'replay',
      log,
      '--rules',
      join(import.meta.dirname, 'fixtures', 'broken.yaml'),
    );
    expect(broken.code).toBe(1);
  });
});

test('replay, simulate and capacity are listed in sluice --help and each has its own --help', async () => {
  const help = await runSluice('--help');
  for (const name of ['replay', 'simulate', 'capacity']) {
    expect(help.out).toContain(`  ${name}`);
    const own = await runSluice(name, '--help');
    expect(own.code).toBe(0);
    expect(own.out).toMatch(new RegExp(`^Usage: sluice ${name} `));
    expect(own.out).toContain('Exit codes:');
  }
});

describe('progress', () => {
  /** Runs the bin under a pseudo-terminal (util-linux `script`), as an operator's shell would. */
  function inTerminal(command: string): Promise<string> {
    return new Promise((resolve, reject) => {
      // Without CI: progress stays quiet in CI, and this test runs there too.
      const env = { ...process.env, CI: '' };
      execFile(
        'script',
        ['-qec', command, '/dev/null'],
        { cwd: ROOT, env, timeout: 120_000 },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      );
    });
  }

  test('a terminal sees lines read and the rate; a pipe does not', async () => {
    const dir = join(tmp, 'big');
    writeLogs(dir, 40_000);
    const command = `${process.execPath} --import tsx packages/cli/src/bin.ts replay ${join(dir, 'access.log')} --rules ${RULES} --top 1`;
    const terminal = await inTerminal(command);
    expect(terminal).toMatch(/access\.log: [\d,]+ lines, [\d,]+ lines\/s/);
    const piped = await new Promise<string>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', 'packages/cli/src/bin.ts', ...command.split(' ').slice(4)],
        { cwd: ROOT },
        (_e, out, err) => resolve(out + err),
      ),
    );
    expect(piped).toContain('40000 requests');
    expect(piped).not.toContain('lines/s');
  }, 180_000);
});

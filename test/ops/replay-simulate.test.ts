/** `sluice simulate`: synthetic traffic of each shape through rules, reported as `sluice replay` reports. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReplayReport } from '@sluice/cli';
import { compileRules, loadRules, tagFor } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runSluice } from './fixtures/sluice.js';

interface Simulated {
  readonly pattern: string;
  readonly requests: number;
  readonly retries: number;
  readonly gaveUp: number;
  readonly report: ReplayReport;
}

let tmp: string;
let rulesPath: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-simulate-'));
  rulesPath = join(tmp, 'rules.yaml');
  // 20 clients at 20/s in all: 1 a second each, 60 a minute, under the 100 a minute per IP.
  writeFileSync(
    rulesPath,
    `domain: sim
rules:
  - name: per_ip
    match: {}
    key: [ip]
    limit: {requests: 100, per: 1m}
  - name: per_ip_shadow
    match: {}
    key: [ip]
    limit: {requests: 30, per: 1m}
    algorithm: fixed_window
    mode: shadow
`,
  );
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function simulate(pattern: string, ...extra: string[]): Promise<Simulated> {
  const run = await runSluice(
    'simulate',
    '--rules',
    rulesPath,
    '--pattern',
    pattern,
    '--keys',
    '20',
    '--duration',
    '5m',
    '--json',
    ...extra,
  );
  expect(run.code, run.err).toBe(0);
  return JSON.parse(run.out) as Simulated;
}

const perIp = (s: Simulated) => s.report.rules.find((r) => r.rule === 'per_ip')!;

describe('sluice simulate', () => {
  test('steady traffic under the limit is never denied; a 10x burst is; shadow rules count would-be denials', async () => {
    const steady = await simulate('steady');
    expect(steady.requests).toBeGreaterThan(5500);
    expect(steady.report.requests).toBe(steady.requests);
    expect(perIp(steady).denied).toBe(0);
    expect(perIp(steady).distinctKeys).toBe(20);
    const shadow = steady.report.rules.find((r) => r.rule === 'per_ip_shadow');
    expect(shadow?.wouldBe).toBeGreaterThan(0);
    expect(shadow?.denied).toBe(0);
    const burst = await simulate('burst');
    expect(perIp(burst).denied).toBeGreaterThan(0);
    // Every denial is counted in its hour.
    expect(perIp(burst).deniedPerHour.reduce((a, b) => a + b, 0)).toBe(perIp(burst).denied);
  });

  test('hot-key: client 0 (10.0.0.0) tops the denials; many-keys: one key per request', async () => {
    const hot = await simulate('hot-key');
    const rules = compileRules(await loadRules(rulesPath));
    expect(perIp(hot).topKeys[0]?.key).toBe(tagFor(rules.rules[0]!, { ip: '10.0.0.0' }));
    const many = await simulate('many-keys');
    expect(perIp(many).distinctKeys).toBe(many.requests);
    expect(perIp(many).denied).toBe(0);
  });

  test('retry-storm: denied clients retry and add load; the ramp ends well above where it started', async () => {
    const storm = await simulate('retry-storm', '--rps', '60');
    expect(storm.retries).toBeGreaterThan(0);
    expect(storm.report.requests).toBe(storm.requests + storm.retries);
    const ramp = await simulate('ramp');
    expect(perIp(ramp).denied).toBeGreaterThan(0);
  });

  test('text report with the pattern; same seed, same report', async () => {
    const text = await runSluice(
      'simulate',
      '--rules',
      rulesPath,
      '--pattern',
      'burst',
      '--keys',
      '20',
      '--duration',
      '5m',
    );
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^simulated burst \(20\/s base, 20 keys\): \d+ requests/);
    expect(text.out).toContain('per_ip (100 per 1m, sliding_window, enforce)');
    expect(await simulate('burst', '--seed', '9')).toEqual(await simulate('burst', '--seed', '9'));
  });

  test('usage errors', async () => {
    const cases: [string[], RegExp][] = [
      [['simulate', '--pattern', 'steady'], /needs --rules/],
      [['simulate', '--rules', rulesPath], /needs --pattern/],
      [['simulate', '--rules', rulesPath, '--pattern', 'tsunami'], /--pattern must be one of steady, burst/],
      [
        ['simulate', '--rules', rulesPath, '--pattern', 'steady', '--duration', '5'],
        /--duration must be a duration/,
      ],
      [
        ['simulate', '--rules', rulesPath, '--pattern', 'steady', '--rps', '0'],
        /--rps must be a whole number/,
      ],
      [['simulate', '--rules', rulesPath, '--pattern', 'steady', 'route'], /expected descriptor=value/],
    ];
    for (const [args, message] of cases) {
      const run = await runSluice(...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.err).toMatch(message);
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { streamIo } from './io.js';
import { main } from './main.js';
import { formatLeft, REDRAW_MS, startProgress } from './progress.js';
import { progressWriter, type TerminalStream } from './progressLine.js';

/** A stand-in for process.stderr: a terminal of `columns` (or not a terminal), keeping what is written. */
function stream(isTTY: boolean, columns = 120): TerminalStream & { text(): string } {
  const written: string[] = [];
  return {
    isTTY,
    columns,
    write: (text) => written.push(text) > 0,
    text: () => written.join(''),
  };
}

/** The progress lines drawn: each redraw starts with a carriage return and an erase. */
function drawn(text: string): string[] {
  return text
    .split('\r\x1b[2K')
    .slice(1)
    .map((line) => line.split('\n')[0] ?? '');
}

let tmp: string;
let log: string;
let rules: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-progress-'));
  rules = join(tmp, 'rules.yaml');
  writeFileSync(
    rules,
    'domain: progress\nrules:\n  - name: per_ip\n    key: [ip]\n    limit: { requests: 100, per: 1m }\n',
  );
  log = join(tmp, 'access.log');
  const start = Date.UTC(2026, 2, 3, 9);
  const lines = Array.from({ length: 20_000 }, (_, i) => {
    const time = new Date(start + i * 100).toUTCString().replace(/^\w+, (\d+) (\w+) (\d+) /, '$1/$2/$3:');
    return `198.51.100.${i % 200} - - [${time.replace(' GMT', ' +0000')}] "GET /items HTTP/1.1" 200 12 "-" "curl"`;
  });
  writeFileSync(log, `${lines.join('\n')}\n`);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the progress line', () => {
  test('drawn on a terminal only: not on a pipe or a file, not in CI', () => {
    expect(progressWriter(stream(false), {})).toBeUndefined();
    expect(progressWriter(stream(true), { CI: 'true' })).toBeUndefined();
    expect(progressWriter(stream(true), { CI: '1' })).toBeUndefined();
    const terminal = stream(true, 30);
    const write = progressWriter(terminal, { CI: 'false' });
    write?.('access.log: 1,000,000 lines, 40,000 lines/s, 50%, 12s left');
    // Cut to the width, so that it never wraps onto a second line.
    expect(drawn(terminal.text())).toEqual(['access.log: 1,000,000 lines,…']);
    // A pseudo-terminal that reports 0 columns is taken as 80 wide.
    const unsized = stream(true, 0);
    progressWriter(unsized, {})?.('access.log: 1,000,000 lines, 40,000 lines/s, 50%, 12s left');
    expect(drawn(unsized.text())).toEqual(['access.log: 1,000,000 lines, 40,000 lines/s, 50%, 12s left']);
  });

  test('lines, rate, share and time left; redrawn at most every REDRAW_MS', () => {
    const terminal = stream(true);
    let now = 0;
    const progress = startProgress(
      streamIo(stream(false), terminal, {}),
      { label: 'a.log', unit: 'lines' },
      () => now,
    );
    now = 2000;
    progress.update(80_000, 0.25);
    now += REDRAW_MS - 1;
    progress.update(90_000, 0.3);
    now = 8000;
    progress.update(320_000, 1);
    progress.end();
    expect(drawn(terminal.text())).toEqual([
      'a.log: 80,000 lines, 40,000 lines/s, 25%, 6s left',
      'a.log: 320,000 lines, 40,000 lines/s, 100%, 0s left',
      '',
    ]);
  });

  test('time left reads as people say it', () => {
    expect([formatLeft(400), formatLeft(42_000), formatLeft(185_000), formatLeft(3_720_000)]).toEqual([
      '0s',
      '42s',
      '3m 05s',
      '1h 02m',
    ]);
  });
});

describe('commands show progress on a terminal, and nothing elsewhere', () => {
  async function run(argv: string[], isTTY: boolean, env: Record<string, string> = {}) {
    const out = stream(false);
    const err = stream(isTTY);
    const code = await main(argv, streamIo(out, err, env));
    return { code, out: out.text(), err: err.text() };
  }

  test('sluice replay: lines, rate, share of the file and time left, then the line is cleared', async () => {
    const terminal = await run(['replay', log, '--rules', rules, '--top', '1'], true);
    expect(terminal.code).toBe(0);
    const lines = drawn(terminal.err);
    expect(lines[0]).toMatch(/access\.log: [\d,]+ lines, [\d,]+ lines\/s, \d+%, [\dhms ]+ left$/);
    expect(lines.at(-1)).toBe('');
    expect(terminal.out).toContain('20000 requests');

    for (const quiet of [
      await run(['replay', log, '--rules', rules], false),
      await run(['replay', log, '--rules', rules], true, { CI: 'true' }),
    ]) {
      expect(quiet.code).toBe(0);
      expect(quiet.err).toBe('');
      expect(quiet.out).toContain('20000 requests');
    }
  });

  test('sluice report: lines of the decision logs, then the line is cleared', async () => {
    const decisions = join(tmp, 'decisions.log');
    writeFileSync(decisions, '{"allowed":true}\n'.repeat(10_000));
    const terminal = await run(['report', decisions], true);
    expect(terminal.code).toBe(0);
    expect(drawn(terminal.err)[0]).toMatch(/^decisions\.log: [\d,]+ lines, [\d,]+ lines\/s, \d+%, .+ left$/);
    expect(drawn(terminal.err).at(-1)).toBe('');
    const piped = await run(['report', decisions], false);
    expect(piped.code).toBe(0);
    expect(piped.err).not.toContain('\r');
  });

  test('sluice simulate: requests, rate, share of simulated time', async () => {
    const argv = ['simulate', '--rules', rules, '--pattern', 'steady', '--rps', '100', '--duration', '2m'];
    const terminal = await run(argv, true);
    expect(terminal.code).toBe(0);
    expect(drawn(terminal.err)[0]).toMatch(
      /^simulate steady: [\d,]+ requests, [\d,]+ requests\/s, \d+%, .+ left$/,
    );
    expect((await run(argv, false)).err).toBe('');
  });

  test('sluice simulate --pattern retry-storm: the header names the retries once', async () => {
    const argv = [
      'simulate',
      '--rules',
      rules,
      '--pattern',
      'retry-storm',
      '--rps',
      '50',
      '--keys',
      '2',
      '--duration',
      '1m',
    ];
    const { code, out } = await run(argv, false);
    expect(code).toBe(0);
    const header = out.split('\n').find((line) => line.includes('simulated retry-storm')) ?? '';
    expect(header).toMatch(/\d+ retries, \d+ gave up/);
    expect(header.match(/gave up/g)).toHaveLength(1);
  });
});

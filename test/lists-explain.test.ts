/**
 * `sluice explain` on rules with actions and lists, run as a user runs it (a subprocess): which action rule
 * decides, which rules an allow rule lifts, and that lists (which live outside the file) are not read.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'sluice-explain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULES = `domain: api
rules:
  - name: per_ip
    owner: t
    key: [ip]
    limit: {requests: 100, per: 1m}
  - name: blocked
    owner: t
    match: {ip: [198.51.100.0/24]}
    action: deny
  - name: office
    owner: t
    match: {ip: 198.51.100.7}
    action: allow
    exempt: [per_ip]
  - name: listed
    owner: t
    match: {ip: {list: blocked_ips}}
    action: deny
`;

function explain(...descriptors: string[]): Promise<{ code: number; stdout: string }> {
  const file = join(dir, 'rules.yaml');
  writeFileSync(file, RULES);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'packages/cli/src/bin.ts', 'explain', file, ...descriptors],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout) => resolve({ code: error ? Number(error.code) : 0, stdout }),
    );
  });
}

describe('sluice explain with actions and lists', () => {
  it('says which deny rule decides and that nothing is counted', async () => {
    const { code, stdout } = await explain('ip=198.51.100.9');
    expect(code).toBe(0);
    expect(stdout).toContain('  blocked\n    action     deny (counts nothing), mode enforce\n');
    expect(stdout).toContain(
      'decided by deny rule blocked: nothing is counted (allow, then deny, then limit)',
    );
    expect(stdout).toContain('lists not read by explain (they match nothing here): blocked_ips');
  }, 60_000);

  it('shows the rules an allow rule lifts', async () => {
    const { code, stdout } = await explain('ip=198.51.100.7');
    expect(code).toBe(0);
    expect(stdout).toContain('  per_ip\n    exempt     by allow rule office: not evaluated\n');
    expect(stdout).toContain('decided by deny rule blocked');
  }, 60_000);
});

/**
 * `pnpm pack` of one package in a fresh clone: no package has a dist yet, and @sluice/cli's prepack type-checks
 * against the workspace packages it depends on (core, envoy, and what envoy needs). Its build must build them
 * first. Done in a `git clone` of this repository in a temporary directory (the committed tree, installed
 * offline from pnpm's store), never by deleting the dist folders of the working tree other tests read.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ok, run, stopRunning } from './workspace.js';

const root = resolve(import.meta.dirname, '../..');
const dest = mkdtempSync(join(tmpdir(), 'sluice-fresh-clone-'));
const clone = join(dest, 'clone');

afterAll(() => {
  stopRunning();
  rmSync(dest, { recursive: true, force: true });
});

describe('a fresh clone', () => {
  it('packs packages/cli alone, building the workspace packages it needs first', {
    timeout: 600_000,
  }, async () => {
    ok('git clone', await run('git', ['clone', '--quiet', root, clone], dest));
    const manager = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager as string;
    // Cleared of the npm_* variables of the pnpm that may be running this test, as a user's shell would be.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
    ok(
      'pnpm install',
      await run('npx', ['--yes', manager, 'install', '--offline', '--frozen-lockfile'], clone, env),
    );
    expect(existsSync(join(clone, 'packages/core/dist'))).toBe(false);
    ok(
      'pnpm pack',
      await run(
        'npx',
        ['--yes', manager, 'pack', '--pack-destination', dest],
        join(clone, 'packages/cli'),
        env,
      ),
    );
    const version = JSON.parse(readFileSync(join(clone, 'packages/cli/package.json'), 'utf8'))
      .version as string;
    const files = execFileSync('tar', ['tzf', join(dest, `sluice-cli-${version}.tgz`)], { encoding: 'utf8' });
    for (const file of ['package/dist/bin.js', 'package/dist/index.js', 'package/dist/index.d.cts'])
      expect(files.split('\n')).toContain(file);
    const manifest = execFileSync(
      'tar',
      ['xzOf', join(dest, `sluice-cli-${version}.tgz`), 'package/package.json'],
      {
        encoding: 'utf8',
      },
    );
    expect(manifest).not.toContain('workspace:');
  });
});

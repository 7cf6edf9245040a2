/** Built copies of other revisions of the tree, so that two versions of Sluice run side by side in one bench run. */
import { execFileSync, execSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout the bench runs from. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGES = ['core', 'redis', 'fastify', 'express', 'koa'] as const;

/** A revision to measure, and the name its rows get. */
export interface Revision {
  readonly name: string;
  readonly rev: string;
}

/** `--revs=before:<rev>,after:<rev>` as revisions; HEAD alone by default. */
export function revisionsFrom(value: string | undefined): Revision[] {
  return (value ?? 'head:HEAD').split(',').map((pair) => {
    const [name = '', rev = ''] = pair.split(':');
    if (!/^[\w-]+$/.test(name) || rev === '') throw new Error(`--revs takes name:rev pairs, got ${pair}`);
    return { name, rev };
  });
}

/**
 * A built copy of the tree at `rev`: the files of the commit, the checkout's installed node_modules (linked:
 * the workspace packages resolve to the copy's own), then the packages and bench/dist built as run.ts does.
 */
export function buildRevision(rev: string): string {
  const sha = execFileSync('git', ['rev-parse', '--short=12', rev], { cwd: ROOT }).toString().trim();
  const dir = join(tmpdir(), `sluice-added-cost-${sha}`);
  if (existsSync(join(dir, 'bench/dist/server.js'))) return dir;
  mkdirSync(dir, { recursive: true });
  execSync(`git archive ${sha} | tar -x -C ${dir}`, { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const folder of [...PACKAGES.map((name) => `packages/${name}`), 'bench']) {
    const modules = join(ROOT, folder, 'node_modules');
    if (existsSync(modules))
      cpSync(modules, join(dir, folder, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  }
  for (const name of PACKAGES) {
    execFileSync(process.execPath, [join(dir, 'scripts/build-package.mjs')], {
      cwd: join(dir, 'packages', name),
      stdio: 'inherit',
    });
  }
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'bench/tsconfig.build.json'],
    {
      cwd: dir,
      stdio: 'inherit',
    },
  );
  return dir;
}

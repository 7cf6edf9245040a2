/**
 * The servers under test run compiled JavaScript, as users run Sluice: the packages are built to their
 * dist/ by scripts/build-package.mjs, as `pnpm build` does (tsc and the CommonJS `.d.cts` typings, so that a
 * local dist is the one that ships), and the bench's server and load files to bench/dist. Running them
 * through tsx instead would add esbuild's keepNames wrapper to every closure Sluice creates (peers are
 * plain JavaScript and would not pay it).
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = ['core', 'redis', 'fastify', 'express', 'koa'] as const;

/** Builds the packages in dependency order, then the bench's server and load generator. */
export function buildForBench(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const buildPackage = join(root, 'scripts/build-package.mjs');
  for (const name of PACKAGES) {
    execFileSync(process.execPath, [buildPackage], { cwd: join(root, 'packages', name), stdio: 'inherit' });
  }
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'bench/tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

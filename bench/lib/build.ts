/**
 * The servers under test run compiled JavaScript, as users run Sluice: the packages are built to their
 * dist/ (tsc, as `pnpm build` does) and the bench's server and load files to bench/dist. Running them
 * through tsx instead would add esbuild's keepNames wrapper to every closure Sluice creates (peers are
 * plain JavaScript and would not pay it).
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PACKAGES = ['core', 'redis', 'fastify', 'express', 'koa'] as const;

/** Builds the packages in dependency order, then the bench's server and load generator. */
export function buildForBench(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const projects = [
    ...PACKAGES.map((name) => `packages/${name}/tsconfig.build.json`),
    'bench/tsconfig.build.json',
  ];
  for (const project of projects) {
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
  }
}

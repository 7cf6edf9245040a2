/**
 * Smoke test of the built packages (`pnpm build` runs before the suite): each is imported by name, through its
 * `exports` map, from a folder outside the workspace, as a user's app would, and shows its main exports.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const app = mkdtempSync(join(tmpdir(), 'sluice-app-'));
mkdirSync(join(app, 'node_modules', '@sluice'), { recursive: true });
const MAIN_EXPORTS: Record<string, string[]> = {
  core: [
    'createLimiter',
    'MemoryStore',
    'compileRules',
    'loadRules',
    'parseRules',
    'watchRules',
    'RulesError',
  ],
  redis: ['RedisStore', 'recommendedRedisOptions', 'publishRules', 'redisRules'],
  prometheus: ['prometheusObserver'],
  fastify: ['rateLimit'],
  express: ['rateLimit'],
  koa: ['rateLimit'],
  cli: [],
};
for (const name of Object.keys(MAIN_EXPORTS)) {
  symlinkSync(join(root, 'packages', name), join(app, 'node_modules', '@sluice', name), 'dir');
}

afterAll(() => rmSync(app, { recursive: true, force: true }));

function importFromApp(name: string): { status: number | null; stdout: string; stderr: string } {
  const script = `const m = await import('@sluice/${name}'); console.log(JSON.stringify(Object.keys(m)));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: app,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('built packages, imported as a user would', () => {
  it.each(Object.entries(MAIN_EXPORTS))('@sluice/%s', (name, expected) => {
    const run = importFromApp(name);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(expect.arrayContaining(expected));
  });

  it('the sluice bin runs', () => {
    const run = spawnSync(process.execPath, [join(root, 'packages/cli/dist/bin.js'), '--help'], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('validate');
  });
});

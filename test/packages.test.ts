/**
 * Smoke test of the built packages (`pnpm build` runs before the suite): each is loaded by name, through its
 * `exports` map, from a folder outside the workspace, as a user's app would: with `import` from ESM and with
 * `require` from CommonJS, which must see the same exports. Packages are found by listing packages/*, so a new one
 * is checked as soon as it exists. The full install from packed tarballs is test/packed/packed.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ruleSchema } from '@sluice/core';
import { ALGORITHM_NAMES } from '@sluice/core/store';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const app = mkdtempSync(join(tmpdir(), 'sluice-app-'));
mkdirSync(join(app, 'node_modules', '@sluice'), { recursive: true });
/** Exports each package must show; a package not listed here must load and export something. */
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
  postgres: ['PostgresStore', 'migrate'],
  opentelemetry: ['openTelemetryObserver'],
  fastify: ['rateLimit'],
  express: ['rateLimit'],
  koa: ['rateLimit'],
  websocket: ['websocketLimit', 'CLOSE_RATE_LIMITED', 'CLOSE_MAX_DURATION'],
  'core/store': [
    'evaluateChecks',
    'releaseLeases',
    'renewLeases',
    'stateKeys',
    'leaseStateKeys',
    'resilientStore',
  ],
  'core/http': ['createHttpLimiter'],
  'core/testing': ['describeStoreContract', 'loadVectors', 'runVectorCase'],
  'nestjs/websocket': ['SluiceWsModule', 'SluiceWsGuard', 'SluiceWsService', 'SLUICE_WS_OPTIONS'],
  graphql: ['costEstimator', 'costDirectivesSdl', 'graphqlHooks'],
  'graphql/apollo': ['apolloCostBudget'],
  'graphql/yoga': ['useCostBudget'],
  'graphql/mercurius': ['mercuriusCostBudget'],
};
/**
 * The entries beside the packages' roots (`exports` subpaths), each loaded as its users would: core's by audience,
 * NestJS's gateways (`@sluice/nestjs/websocket`, apart so that HTTP-only apps need no @nestjs/websockets), and the
 * GraphQL server plugins (one entry a server, so that an app loads only its own server's).
 */
const SUB_ENTRIES = [
  'core/http',
  'core/store',
  'core/testing',
  'nestjs/websocket',
  'graphql/apollo',
  'graphql/yoga',
  'graphql/mercurius',
];
const names = readdirSync(join(root, 'packages'));
for (const name of names) {
  symlinkSync(join(root, 'packages', name), join(app, 'node_modules', '@sluice', name), 'dir');
}

afterAll(() => rmSync(app, { recursive: true, force: true }));

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runInApp(args: string[]): Run {
  const run = spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function importKeys(name: string): Run {
  const script = `const m = await import('@sluice/${name}'); console.log(JSON.stringify(Object.keys(m)));`;
  return runInApp(['--input-type=module', '-e', script]);
}

function requireKeys(name: string): Run {
  const script = `const m = require('@sluice/${name}'); console.log(JSON.stringify(Object.keys(m)));`;
  return runInApp(['--input-type=commonjs', '-e', script]);
}

function keysOf(run: Run): string[] {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as string[];
}

describe('built packages, loaded as a user would', () => {
  it.each([...names, ...SUB_ENTRIES])('@sluice/%s: import and require give the same exports', (name) => {
    const imported = keysOf(importKeys(name));
    expect(imported).toEqual(expect.arrayContaining(MAIN_EXPORTS[name] ?? []));
    expect(imported.length).toBeGreaterThan(0);
    expect(keysOf(requireKeys(name)).sort()).toEqual([...imported].sort());
  });

  it('require and import share one copy of each module (no dual-package hazard)', () => {
    const script = `
      const viaRequire = require('@sluice/core');
      import('@sluice/core').then((viaImport) => console.log(viaImport.RulesError === viaRequire.RulesError));`;
    expect(runInApp(['--input-type=commonjs', '-e', script]).stdout.trim()).toBe('true');
  });

  it('npm pack is refused with the reason: it would ship workspace: ranges (the packed test packs with pnpm)', () => {
    // Without the npm_* variables of a pnpm run around the test, which would point npm at the workspace root.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
    const run = spawnSync('npm', ['pack', '--dry-run'], {
      cwd: join(root, 'packages/express'),
      env,
      encoding: 'utf8',
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('@sluice/express: pack and publish with pnpm (pnpm pack, pnpm publish)');
  });

  it('the sluice bin runs', () => {
    const run = spawnSync(process.execPath, [join(root, 'packages/cli/dist/bin.js'), '--help'], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('validate');
  });
});

/** The file's text; empty when it does not exist, so that the assertions name what is missing. */
function textOf(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** Packages that read no rules (a fetch client), whose README need not point at the rules reference. */
const WITHOUT_RULES = new Set(['client']);

describe('docs that ship', () => {
  const rulesReference = 'https://github.com/sluice-rl/sluice/blob/main/packages/core/RULES.md';

  it('RULES.md, shipped in @sluice/core, has a row for every rule field and every algorithm', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8'));
    expect(manifest.files).toContain('RULES.md');
    const rows = textOf(join(root, 'packages/core/RULES.md'))
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => /^\| `([a-z_.]+)`/.exec(line)?.[1]);
    expect(rows).toEqual(
      expect.arrayContaining([...Object.keys(ruleSchema.shape), 'domain', ...ALGORITHM_NAMES]),
    );
  });

  it.each(names)('@sluice/%s README: module systems, the rules reference, only absolute links', (name) => {
    const readme = textOf(join(root, 'packages', name, 'README.md'));
    expect(readme).toMatch(/^# @sluice\//);
    expect(readme).toContain('**Module systems**');
    if (!WITHOUT_RULES.has(name)) expect(readme).toContain(name === 'core' ? 'RULES.md' : rulesReference);
    expect(readme.match(/\]\((?!https?:|#)[^)]*\)/g)).toBeNull();
  });
});

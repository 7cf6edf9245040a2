/**
 * The packages as a user gets them from the registry: every package under packages/ is packed with pnpm (running
 * its prepack), the tarballs are installed with npm into an app in the system's temp directory, outside the
 * workspace, and there an ESM Fastify app, CommonJS Express, Koa and Nest apps and an ESM Hono app each serve real
 * HTTP up to their first 429, @sluice/websocket limits `ws` servers from ESM and CommonJS, @sluice/opentelemetry records on the OpenTelemetry SDK from ESM and CommonJS,
 * @sluice/graphql's root and its Apollo, Yoga and Mercurius entries budget a query from ESM and CommonJS, a
 * TypeScript file type-checks under `module: node16` (and runs) and under `moduleResolution: bundler`, and
 * `npx sluice validate` checks a rules file. A second app installs only @sluice/cli, which must validate without
 * ioredis and say what to install for `push`. Runs in `pnpm test`, after the build.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../support/postgres.js';
import { connect, opened, until } from '../websocket/clients.js';
import { startApp, untilDenied } from './apps.js';
import { type Answers, attempts, EXPECTED, EXPECTED_ATTEMPTS, SERVER_PROBES } from './migrations.js';
import { migrationPairs, snippetFile } from './snippets.js';
import {
  appEnv,
  type CommandResult,
  npmInstall,
  ok,
  pack,
  run,
  stopRunning,
  tarballName,
  type WorkspacePackage,
  workspacePackages,
} from './workspace.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./app', import.meta.url));
/** Third-party packages the apps use, at the versions the workspace tests with. */
const APP_DEPENDENCIES = [
  'express',
  'fastify',
  'koa',
  'hono',
  '@hono/node-server',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/websockets',
  'reflect-metadata',
  'rxjs',
  '@types/express',
  '@types/koa',
  '@types/node',
  '@opentelemetry/api',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/sdk-trace-base',
  'ws',
  'graphql',
  '@apollo/server',
  'graphql-yoga',
  'mercurius',
];
/** The libraries MIGRATING.md's "before" programs use. */
const MIGRATING_FROM: Record<string, string> = {
  'express-rate-limit': '^8.0.0',
  '@fastify/rate-limit': '^11.0.0',
  'koa-ratelimit': '^6.0.0',
  'rate-limiter-flexible': '^11.0.0',
};
const PAIRS = migrationPairs(readFileSync(join(ROOT, 'packages/core/MIGRATING.md'), 'utf8'));
// Generous: on a loaded machine packing, installing and two type checks take minutes; on a quiet one, under one.
const SETUP_TIMEOUT_MS = 900_000;
const TEST_TIMEOUT_MS = 600_000;

const packages = workspacePackages(ROOT);
let tmp: string;
let app: string;
let cliOnly: string;

/** The Sluice packages named, installed from their tarballs in `packs`. */
function tarballDependencies(names: readonly string[], packs: string): Record<string, string> {
  const chosen = packages.filter((pkg) => names.includes(pkg.name));
  return Object.fromEntries(chosen.map((pkg) => [pkg.name, `file:${join(packs, tarballName(pkg))}`]));
}

function thirdPartyDependencies(): Record<string, string> {
  const { devDependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return Object.fromEntries(APP_DEPENDENCIES.map((name) => [name, devDependencies[name]]));
}

function writeApp(dir: string, dependencies: Record<string, string>): void {
  mkdirSync(dir);
  cpSync(FIXTURES, dir, { recursive: true });
  // No "type": a CommonJS project, as most Express and Koa apps still are; the ESM files are .mjs.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'user-app', private: true, dependencies }));
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-packed-'));
  const packs = join(tmp, 'packs');
  mkdirSync(packs);
  await pack(ROOT, packages, packs);
  app = join(tmp, 'app');
  const everyPackage = packages.map((pkg) => pkg.name);
  writeApp(app, {
    ...tarballDependencies(everyPackage, packs),
    ...thirdPartyDependencies(),
    ...MIGRATING_FROM,
  });
  for (const { library, before, after } of PAIRS) {
    writeFileSync(join(app, snippetFile(library, 'before', before)), before);
    writeFileSync(join(app, snippetFile(library, 'after', after)), after);
  }
  cliOnly = join(tmp, 'cli-only');
  writeApp(cliOnly, tarballDependencies(['@sluice/core', '@sluice/envoy', '@sluice/cli'], packs));
  await Promise.all([npmInstall(app), npmInstall(cliOnly)]);
}, SETUP_TIMEOUT_MS);

// Removing the apps' node_modules (four GraphQL servers among them) takes over a minute on a loaded machine.
afterAll(() => {
  stopRunning();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
}, SETUP_TIMEOUT_MS);

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

/** A relative specifier in a declaration file: `from './x.js'`, `import('./x.js')`. */
const RELATIVE_SPECIFIER = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * What is wrong with one file of an installed package's dist: an output without a source (a stale build), a map
 * without its sources, a CommonJS typing (`.d.cts`) importing anything but another one (which TypeScript refuses
 * under `module: node16` to users who do not skip library checks).
 */
function distFileProblems(pkg: WorkspacePackage, installed: string, file: string): string[] {
  const path = join(installed, 'dist', file);
  if (
    file.endsWith('.js') &&
    !existsSync(join(ROOT, 'packages', pkg.dir, 'src', file.replace(/\.js$/, '.ts')))
  ) {
    return [`dist/${file} has no source (a stale build?)`];
  }
  if (file.endsWith('.js.map')) {
    const map = JSON.parse(readFileSync(path, 'utf8'));
    return map.sourcesContent?.length === map.sources.length ? [] : [`dist/${file} lacks its sources`];
  }
  if (!file.endsWith('.d.cts')) return [];
  const specifiers = [...readFileSync(path, 'utf8').matchAll(RELATIVE_SPECIFIER)].map(
    (match) => match[1] ?? '',
  );
  return specifiers
    .filter(
      (spec) => !spec.endsWith('.cjs') || !existsSync(join(dirname(path), spec.replace(/\.cjs$/, '.d.cts'))),
    )
    .map((spec) => `dist/${file} imports ${spec}, not a CommonJS typing`);
}

/** Every file an `exports` map names (each entry's conditions, nested), e.g. core's `./http` typings. */
function exportedFiles(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (typeof exports !== 'object' || exports === null) return [];
  return Object.values(exports).flatMap(exportedFiles);
}

/** What a tarball, as npm installed it, gets wrong; empty when nothing. */
function tarballProblems(pkg: WorkspacePackage): string[] {
  const installed = join(app, 'node_modules', pkg.name);
  const problems: string[] = [];
  for (const file of ['LICENSE', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/index.d.cts']) {
    if (!existsSync(join(installed, file))) problems.push(`no ${file}`);
  }
  const manifest = readFileSync(join(installed, 'package.json'), 'utf8');
  if (manifest.includes('workspace:')) problems.push('a workspace: range in package.json');
  for (const file of exportedFiles(JSON.parse(manifest).exports)) {
    if (!existsSync(join(installed, file))) problems.push(`no ${file}, though "exports" names it`);
  }
  for (const entry of JSON.parse(manifest).files ?? []) {
    if (!existsSync(join(installed, entry))) problems.push(`no ${entry}, though "files" lists it`);
  }
  if (existsSync(join(installed, 'README.md'))) {
    const relative = readFileSync(join(installed, 'README.md'), 'utf8').match(/\]\((?!https?:|#)[^)]*\)/g);
    if (relative !== null) problems.push(`relative README links ${relative.join(' ')}`);
  }
  for (const file of filesUnder(join(installed, 'dist')))
    problems.push(...distFileProblems(pkg, installed, file));
  return problems;
}

function tsc(project: string): Promise<CommandResult> {
  const compiler = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  return run(process.execPath, [compiler, '-p', project], app);
}

/**
 * tsc's errors in the user's file and in Sluice's declarations (third-party typings are theirs). Library checks are
 * skipped, as most projects do and for speed; what they would catch in Sluice's CommonJS typings,
 * distFileProblems checks.
 */
function ourErrors(result: CommandResult): string[] {
  return result.stdout.split('\n').filter((line) => /^(user\.ts|node_modules\/@sluice\/)/.test(line));
}

describe.concurrent('packed packages installed with npm outside the workspace', {
  timeout: TEST_TIMEOUT_MS,
}, () => {
  it('every tarball: LICENSE, README with absolute links, dist with both typings, every file exports names, real versions, maps with sources', () => {
    expect(packages.length).toBeGreaterThanOrEqual(7);
    expect(Object.fromEntries(packages.map((pkg) => [pkg.name, tarballProblems(pkg)]))).toEqual(
      Object.fromEntries(packages.map((pkg) => [pkg.name, []])),
    );
  });

  it('ESM Fastify: the rules file limits /, the per-route limit /search, each to a 429', async () => {
    const server = await startApp('fastify-app.mjs', app);
    try {
      const search = await untilDenied(`${server.url}/search`, 10);
      expect(search.allowed).toBe(2);
      expect(search.denied?.status).toBe(429);
      expect(search.denied?.headers.get('x-ratelimit-rule')).toBe('search_burst');
      expect(Number(search.denied?.headers.get('retry-after'))).toBeGreaterThan(0);
      // The two /search requests were counted by the file's rule too: 5 an hour in all.
      const root = await untilDenied(`${server.url}/`, 10);
      expect(root.allowed).toBe(3);
      expect(root.denied?.headers.get('x-ratelimit-rule')).toBe('per_ip');
    } finally {
      server.stop();
    }
  });

  it.each(['websocket-esm.mjs', 'websocket-cjs.cjs'])(
    '@sluice/websocket (%s): a second socket refused on the handshake with a 429, a second message with an error frame',
    async (file) => {
      const server = await startApp(file, app);
      try {
        const url = server.url.replace('http:', 'ws:');
        const { ws, frames } = opened(await connect(url));
        const second = await connect(url);
        expect('refused' in second && second.refused.statusCode).toBe(429);
        ws.send('a');
        ws.send('b');
        await until(() => frames.length === 2);
        expect(frames[0]).toBe('echo:a');
        expect(JSON.parse(frames[1]!)).toMatchObject({
          type: 'rate_limited',
          rule: 'messages_per_connection',
        });
        ws.close();
      } finally {
        server.stop();
      }
    },
  );

  it('@sluice/nestjs/websocket loads from the tarball in CommonJS and ESM, with the same exports', async () => {
    const list = 'console.log(Object.keys(m).sort().join(","))';
    const cjs = await run(
      process.execPath,
      ['-e', `const m = require('@sluice/nestjs/websocket'); ${list}`],
      app,
    );
    const esm = await run(
      process.execPath,
      ['--input-type=module', '-e', `import * as m from '@sluice/nestjs/websocket'; ${list}`],
      app,
    );
    const names = ok('require', cjs).stdout.trim();
    expect(names.split(',')).toEqual(
      expect.arrayContaining(['SluiceWsGuard', 'SluiceWsModule', 'SluiceWsService']),
    );
    expect(ok('import', esm).stdout.trim()).toBe(names);
  });

  it('CommonJS Express: require and app.use(rateLimit()) limit to 60 a minute per IP', async () => {
    const server = await startApp('express-app.cjs', app);
    try {
      const result = await untilDenied(`${server.url}/`, 100);
      // A sliding window: a run that crosses a minute boundary may let one or two more through.
      expect(result.allowed).toBeGreaterThanOrEqual(60);
      expect(result.allowed).toBeLessThanOrEqual(62);
      expect(result.denied?.status).toBe(429);
      expect(await result.denied?.json()).toMatchObject({ error: 'rate_limited' });
    } finally {
      server.stop();
    }
  });

  it('CommonJS Koa: require and a rules object limit to 3 an hour per IP', async () => {
    const server = await startApp('koa-app.cjs', app);
    try {
      const result = await untilDenied(`${server.url}/`, 10);
      expect(result.allowed).toBe(3);
      expect(result.denied?.status).toBe(429);
      expect(result.denied?.headers.get('x-ratelimit-rule')).toBe('koa_per_ip');
    } finally {
      server.stop();
    }
  });

  it('ESM Hono: the shorthand limits to 3 an hour per IP', async () => {
    const server = await startApp('hono-app.mjs', app);
    try {
      const result = await untilDenied(`${server.url}/`, 10);
      expect(result.allowed).toBe(3);
      expect(result.denied?.status).toBe(429);
      expect(result.denied?.headers.get('x-ratelimit-rule')).toBe('per_ip');
    } finally {
      server.stop();
    }
  });

  it('CommonJS Nest on Express: the module shorthand limits /, @RateLimit /search, with the same 429', async () => {
    const server = await startApp('nest-app.cjs', app);
    try {
      const search = await untilDenied(`${server.url}/search`, 10);
      expect(search.allowed).toBe(1);
      expect(search.denied?.headers.get('x-ratelimit-rule')).toBe('hello_controller_search');
      // The /search request counted for the module's rule too: 2 more of its 3.
      const root = await untilDenied(`${server.url}/`, 10);
      expect(root.allowed).toBe(2);
      const denied = root.denied;
      expect(denied?.status).toBe(429);
      expect(denied?.headers.get('x-ratelimit-rule')).toBe('per_ip');
      expect(denied?.headers.get('ratelimit-policy')).toBe('"per_ip";q=3;w=3600');
      expect(Number(denied?.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(denied?.headers.get('cache-control')).toBe('no-store');
      expect(await denied?.json()).toMatchObject({ error: 'rate_limited', rule: 'per_ip' });
    } finally {
      server.stop();
    }
  });

  it('@sluice/opentelemetry from ESM and CommonJS: the span and the meter get each decision', async () => {
    const expected = {
      outcomes: ['allowed', 'allowed', 'denied'],
      events: [[], [], ['sluice.rate_limited']],
      decisions: [
        ['allowed', 2],
        ['denied', 1],
      ],
    };
    for (const file of ['otel-esm.mjs', 'otel-cjs.cjs']) {
      const ran = ok(`node ${file}`, await run(process.execPath, [file], app));
      expect(JSON.parse(ran.stdout)).toEqual(expected);
    }
  });

  it('@sluice/graphql, /apollo, /yoga and /mercurius from ESM and CommonJS: a query answered with its cost, then THROTTLED', async () => {
    const twice = [
      [200, 12],
      [429, 'THROTTLED'],
    ];
    for (const file of ['graphql-esm.mjs', 'graphql-cjs.cjs']) {
      const ran = ok(`node ${file}`, await run(process.execPath, [file], app));
      expect(JSON.parse(ran.stdout)).toEqual({ estimate: 12, apollo: twice, yoga: twice, mercurius: twice });
    }
  });

  it('@sluice/postgres from ESM and CommonJS: migrate, then counts on a private PostgreSQL', async () => {
    const server = await startPostgres();
    try {
      const env = { ...appEnv(), SLUICE_PG_URL: server.url };
      for (const file of ['pg-esm.mjs', 'pg-cjs.cjs']) {
        const ran = ok(`node ${file}`, await run(process.execPath, [file], app, env));
        expect(JSON.parse(ran.stdout)).toEqual([true, true, false]);
      }
    } finally {
      await server.stop();
    }
  });

  it('TypeScript, module node16 in a CommonJS project: type-checks, and the compiled require() code runs', async () => {
    const result = await tsc('tsconfig.node16.json');
    expect(ourErrors(result)).toEqual([]);
    expect(existsSync(join(app, 'out', 'user.js'))).toBe(true);
    const ran = ok('node out/user.js', await run(process.execPath, ['out/user.js'], app));
    expect(
      ran.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { first: true, second: false, rule: 'per_key', wrong: false },
      { rulesError: true },
      // @sluice/core/http, /testing and /store through require(): the shared vectors all pass on MemoryStore, and
      // the evaluator decides over a Map.
      { retryAfter: true, cases: true, mismatches: 0, evaluated: [true, false] },
    ]);
  });

  it('TypeScript, moduleResolution bundler: type-checks', async () => {
    expect(ourErrors(await tsc('tsconfig.bundler.json'))).toEqual([]);
  });

  it('npx sluice validate checks a rules file', async () => {
    const valid = await run('npx', ['--no', 'sluice', 'validate', 'rules.yaml'], app);
    expect(valid.stderr).toBe('');
    expect(valid.stdout).toContain('rules.yaml: ok, domain packed_app');
    expect(valid.code).toBe(0);
  });

  it('@sluice/cli alone: installs without ioredis, validates, and push names what to install', async () => {
    expect(existsSync(join(cliOnly, 'node_modules', 'ioredis'))).toBe(false);
    const valid = await run('npx', ['--no', 'sluice', 'validate', 'rules.yaml'], cliOnly);
    expect(valid.stdout).toContain('rules.yaml: ok');
    expect(valid.code).toBe(0);
    const push = await run(
      'npx',
      ['--no', 'sluice', 'push', 'rules.yaml', '--redis', 'redis://127.0.0.1:1'],
      cliOnly,
    );
    expect(push.stderr).toContain('(not installed: ioredis, @sluice/redis)');
    expect(push.stderr).toContain('npm install ioredis @sluice/redis');
    expect(push.code).toBe(2);
  });
});

/** A MIGRATING.md program's answers: a server's to its library's probe, a script's from its output. */
async function answersOf(library: string, file: string): Promise<Answers> {
  const probe = SERVER_PROBES[library];
  if (probe === undefined) return attempts(ok(file, await run(process.execPath, [file], app)).stdout);
  const server = await startApp(file, app, ['--require', './free-port.cjs']);
  try {
    return await probe(server.url);
  } finally {
    server.stop();
  }
}

describe.concurrent('MIGRATING.md: each before/after pair, run', { timeout: TEST_TIMEOUT_MS }, () => {
  it('has a pair for each library it covers', () => {
    expect(PAIRS.map((pair) => pair.library).sort()).toEqual(Object.keys(MIGRATING_FROM).sort());
  });

  it.each(PAIRS)('$library: the Sluice program answers as the original does', async (pair) => {
    const [before, after] = await Promise.all([
      answersOf(pair.library, snippetFile(pair.library, 'before', pair.before)),
      answersOf(pair.library, snippetFile(pair.library, 'after', pair.after)),
    ]);
    expect(before).toEqual(EXPECTED[pair.library] ?? EXPECTED_ATTEMPTS);
    expect(after).toEqual(before);
  });
});

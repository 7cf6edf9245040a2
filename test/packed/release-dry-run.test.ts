/**
 * The release dry run: every package packed with pnpm as a release would publish it, then each framework adapter
 * installed ALONE in its own empty directory with exactly the line its README opens with (the Sluice names as
 * tarballs, plus the tarballs of the Sluice packages it depends on, which npm cannot fetch before they are
 * published: see RELEASING.md), and run from ESM and from CommonJS to a real 429. The five installs run at once.
 * What the line installs must be a consistent tree (`npm ls` clean: no missing or invalid peer).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, untilDenied } from './apps.js';
import {
  type Manifest,
  manifestOf,
  readmeInstallLine,
  sluiceClosure,
  tarballInstallWords,
} from './installLines.js';
import { ok, pack, run, stopRunning, tarballName, workspacePackages } from './workspace.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const packages = workspacePackages(ROOT);
const manifests = new Map<string, Manifest>(packages.map((pkg) => [pkg.name, manifestOf(ROOT, pkg.dir)]));
const LIMIT = 2;

/** A module an app loads: named bindings, or the default export under a name. */
type Import = { readonly from: string } & ({ readonly names: string[] } | { readonly default: string });

interface Adapter {
  readonly dir: string;
  readonly imports: readonly Import[];
  /** The app after its imports: it serves GET / under the shorthand (LIMIT an hour per IP), then prints its port. */
  readonly body: string;
  /** What the app needs besides the README's line, as that README says (a Nest app brings its platform). */
  readonly extra?: readonly string[];
}

const LISTENING = "console.log('listening ' + server.address().port)";

const ADAPTERS: readonly Adapter[] = [
  {
    dir: 'fastify',
    imports: [
      { from: 'fastify', default: 'Fastify' },
      { from: '@sluice/fastify', names: ['rateLimit'] },
    ],
    body: `const app = Fastify();
app.register(rateLimit, { limit: ${LIMIT}, per: '1h' });
app.get('/', async () => ({ hello: 'world' }));
app.listen({ port: 0, host: '127.0.0.1' }).then(() => { const server = app.server; ${LISTENING}; });`,
  },
  {
    dir: 'express',
    imports: [
      { from: 'express', default: 'express' },
      { from: '@sluice/express', names: ['rateLimit'] },
    ],
    body: `const app = express();
app.use(rateLimit({ limit: ${LIMIT}, per: '1h' }));
app.get('/', (_req, res) => { res.json({ hello: 'world' }); });
const server = app.listen(0, '127.0.0.1', () => ${LISTENING});`,
  },
  {
    dir: 'koa',
    imports: [
      { from: 'koa', default: 'Koa' },
      { from: '@sluice/koa', names: ['rateLimit'] },
    ],
    body: `const app = new Koa();
app.use(rateLimit({ limit: ${LIMIT}, per: '1h' }));
app.use((ctx) => { ctx.body = { hello: 'world' }; });
const server = app.listen(0, '127.0.0.1', () => ${LISTENING});`,
  },
  {
    dir: 'hono',
    imports: [
      { from: '@hono/node-server', names: ['serve'] },
      { from: 'hono', names: ['Hono'] },
      { from: '@sluice/hono', names: ['rateLimit'] },
    ],
    body: `const app = new Hono();
app.use(rateLimit({ limit: ${LIMIT}, per: '1h' }));
app.get('/', (c) => c.json({ hello: 'world' }));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ${LISTENING});`,
  },
  {
    dir: 'nestjs',
    imports: [
      { from: 'reflect-metadata', names: [] },
      { from: '@nestjs/common', names: ['Controller', 'Get', 'Module'] },
      { from: '@nestjs/core', names: ['NestFactory'] },
      { from: '@sluice/nestjs', names: ['SluiceModule'] },
    ],
    // The decorators applied as the TypeScript compiler applies them: plain JavaScript has no decorator syntax.
    body: `class HelloController { hello() { return { hello: 'world' }; } }
Controller()(HelloController);
const proto = HelloController.prototype;
Object.defineProperty(proto, 'hello',
  Reflect.decorate([Get()], proto, 'hello', Object.getOwnPropertyDescriptor(proto, 'hello')));
class AppModule {}
Module({ imports: [SluiceModule.forRoot({ limit: ${LIMIT}, per: '1h' })], controllers: [HelloController] })(AppModule);
NestFactory.create(AppModule, { logger: false }).then(async (app) => {
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer();
  ${LISTENING};
});`,
    extra: ['@nestjs/platform-express'],
  },
];

function importLine(spec: Import, esm: boolean): string {
  if ('default' in spec) {
    return esm
      ? `import ${spec.default} from '${spec.from}';`
      : `const ${spec.default} = require('${spec.from}');`;
  }
  if (spec.names.length === 0) return esm ? `import '${spec.from}';` : `require('${spec.from}');`;
  const names = `{ ${spec.names.join(', ')} }`;
  return esm ? `import ${names} from '${spec.from}';` : `const ${names} = require('${spec.from}');`;
}

function appSource(adapter: Adapter, esm: boolean): string {
  return `${adapter.imports.map((spec) => importLine(spec, esm)).join('\n')}\n\n${adapter.body}\n`;
}

// Generous, as for the packed test: packing and five installs on a loaded 2-core machine.
const SETUP_TIMEOUT_MS = 900_000;
let tmp: string;
const installed = new Map<string, string>();

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sluice-release-'));
  const packs = join(tmp, 'tarballs');
  mkdirSync(packs);
  await pack(ROOT, packages, packs);
  const tarballOf = (name: string): string => {
    const pkg = packages.find((candidate) => candidate.name === name);
    if (pkg === undefined) throw new Error(`no workspace package ${name}`);
    return join(packs, tarballName(pkg));
  };
  await Promise.all(
    ADAPTERS.map(async (adapter) => {
      const dir = join(tmp, adapter.dir);
      mkdirSync(dir);
      // An empty project: no "type", so CommonJS by default, the ESM app an .mjs file.
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `try-${adapter.dir}`, private: true }));
      writeFileSync(join(dir, 'app.mjs'), appSource(adapter, true));
      writeFileSync(join(dir, 'app.cjs'), appSource(adapter, false));
      const readme = readFileSync(join(ROOT, 'packages', adapter.dir, 'README.md'), 'utf8');
      const words = readmeInstallLine(readme);
      if (words === undefined) throw new Error(`packages/${adapter.dir}/README.md has no npm install line`);
      const args = [
        'install',
        ...tarballInstallWords(words, manifests, tarballOf),
        ...(adapter.extra ?? []),
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ];
      ok(`npm install in ${adapter.dir}`, await run('npm', args, dir));
      installed.set(adapter.dir, dir);
    }),
  );
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  stopRunning();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

describe.each(ADAPTERS.map((adapter) => adapter.dir))('@sluice/%s alone, from its README line', (dir) => {
  it('installs only itself and the Sluice packages it depends on, with every peer satisfied', async () => {
    const app = installed.get(dir)!;
    const name = `@sluice/${dir}`;
    expect(
      readdirSync(join(app, 'node_modules/@sluice'))
        .map((entry) => `@sluice/${entry}`)
        .sort(),
    ).toEqual([name, ...sluiceClosure(name, manifests)].sort());
    ok('npm ls', await run('npm', ['ls', '--all', '--loglevel=error'], app));
  });

  it.each(['app.mjs', 'app.cjs'])('%s serves up to its limit, then a 429 with Retry-After', async (file) => {
    const server = await startApp(file, installed.get(dir)!);
    try {
      const { allowed, denied } = await untilDenied(`${server.url}/`, LIMIT + 3);
      expect(allowed).toBe(LIMIT);
      expect(denied?.status).toBe(429);
      expect(Number(denied?.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      server.stop();
    }
  });
});

#!/usr/bin/env node
/**
 * Builds the package in the working directory (each package's `build` and `prepack`): tsc, then a CommonJS twin
 * (`.d.cts`) of every declaration file for the `require` condition of its exports.
 *
 * Why twins: `require('@sluice/x')` loads the same ESM files through Node's require(esm), but TypeScript under
 * `module: node16` refuses to let a CommonJS file import a declaration file it sees as ESM. The twins are the same
 * declarations in CommonJS files, importing each other by `.cjs` specifiers, so the whole graph stays CommonJS.
 *
 * `--unless-fresh` (prepack) skips the build when dist was written after every input (and source directory) changed:
 * `pnpm test` has just built, and packing every package must not compile them all a second time.
 *
 * First, each workspace package this one depends on (a `workspace:` range) is built the same way unless fresh: tsc
 * reads their types from their dist, so `pnpm pack` of one package in a fresh clone (no dist anywhere) works. Under
 * `pnpm -r build` they were built just before, in dependency order, and are skipped as fresh.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A relative specifier ending in `.js` in `from '...'`, `import '...'` or `import("...")`. */
const RELATIVE_JS = /(\b(?:from|import)\s*\(?\s*['"]\.{1,2}\/[^'"]*?)\.js(['"])/g;

/** tsc from a clean dist: tsc never deletes the output of a source that was removed or moved, and it would ship. */
function compile() {
  rmSync('dist', { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

/** The CommonJS twin of one declaration file's text. */
function toCommonJsDeclaration(text) {
  return text.replace(RELATIVE_JS, '$1.cjs$2');
}

function writeCommonJsDeclarations(dir) {
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.d.ts')) continue;
    const text = readFileSync(join(dir, file), 'utf8');
    writeFileSync(join(dir, `${file.slice(0, -'.d.ts'.length)}.d.cts`), toCommonJsDeclaration(text));
  }
}

/** Written by every build after tsc: its time is the build's. */
const LAST_OUTPUT = 'dist/index.d.cts';

function newestInput() {
  const inputs = [
    'tsconfig.build.json',
    '../../tsconfig.base.json',
    fileURLToPath(import.meta.url),
    // Directories too: removing a source changes only its directory's time, and dist must lose its output.
    'src',
    ...readdirSync('src', { recursive: true, encoding: 'utf8' }).map((file) => join('src', file)),
  ];
  return Math.max(...inputs.map((file) => statSync(file).mtimeMs));
}

function isFresh() {
  return existsSync(LAST_OUTPUT) && statSync(LAST_OUTPUT).mtimeMs >= newestInput();
}

/**
 * npm packs `workspace:` ranges as they are, and no one can install the tarball: as `prepack`, refuse to run under
 * any packer but pnpm, which writes the versions in.
 */
function refuseOtherPackers() {
  const agent = process.env.npm_config_user_agent ?? '';
  const manifest = readFileSync('package.json', 'utf8');
  if (
    process.env.npm_lifecycle_event !== 'prepack' ||
    agent.startsWith('pnpm/') ||
    !manifest.includes('workspace:')
  )
    return;
  process.stderr.write(
    `${JSON.parse(manifest).name}: pack and publish with pnpm (pnpm pack, pnpm publish), which turns the ` +
      `workspace: ranges of sibling packages into versions; ${agent.split(' ')[0] || 'this packer'} would ship them as they are\n`,
  );
  process.exit(1);
}

/** The directories of the workspace packages named by `workspace:` ranges in this package's manifest. */
function workspaceDependencies() {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  const wanted = new Set();
  for (const field of ['dependencies', 'peerDependencies', 'devDependencies', 'optionalDependencies'])
    for (const [name, range] of Object.entries(manifest[field] ?? {}))
      if (String(range).startsWith('workspace:')) wanted.add(name);
  const dirs = [];
  for (const dir of readdirSync('..')) {
    const path = join('..', dir, 'package.json');
    if (existsSync(path) && wanted.has(JSON.parse(readFileSync(path, 'utf8')).name))
      dirs.push(join('..', dir));
  }
  return dirs;
}

/** Builds each workspace dependency whose dist is missing or older than its sources (they do the same, in turn). */
function buildDependencies() {
  const script = fileURLToPath(import.meta.url);
  for (const dir of workspaceDependencies()) {
    const run = spawnSync(process.execPath, [script, '--unless-fresh'], { cwd: dir, stdio: 'inherit' });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
}

refuseOtherPackers();
buildDependencies();
if (!(process.argv.includes('--unless-fresh') && isFresh())) {
  compile();
  writeCommonJsDeclarations('dist');
}

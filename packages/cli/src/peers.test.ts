/**
 * Every package the CLI's code loads, by import or by a name given to import(), is declared in its manifest: a
 * dependency, or an optional peer (a strict install, pnpm's, lets a package load only what it declares; `sluice
 * migrate` next to @sluice/postgres exited 2 before it was one). And a peer the CLI shares with a store accepts
 * what that store accepts, so `npm ls` passes next to either major of ioredis.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Manifest {
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));
const manifest = (name: string): Manifest =>
  JSON.parse(readFileSync(join(PACKAGES, name, 'package.json'), 'utf8')) as Manifest;
const cli = manifest('cli');

/** The source files of the CLI (tests left out: they run in the workspace, not in an install). */
function sources(dir = fileURLToPath(new URL('.', import.meta.url))): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`). */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Packages the code loads: static and type-free imports, import('x'), and names kept in a `*_PACKAGE` constant. */
function loaded(): Set<string> {
  const names = new Set<string>();
  const patterns = [
    /^import (?!type )[^;]*? from '([^'.][^']*)'/gm,
    /\bimport\('([^'.][^']*)'\)/g,
    /_PACKAGE = '([^']+)'/g,
  ];
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns)
      for (const match of text.matchAll(pattern)) names.add(packageOf(match[1]!));
  }
  for (const name of [...names])
    if (name.startsWith('node:') || builtinModules.includes(name)) names.delete(name);
  return names;
}

describe("@sluice/cli's manifest", () => {
  it('declares every package its code loads: a dependency, or an optional peer', () => {
    const names = loaded();
    // What the scan must find, or it reads nothing: the store packages and the Redis client, loaded on demand.
    expect([...names]).toEqual(
      expect.arrayContaining(['@sluice/core', '@sluice/postgres', '@sluice/redis', 'ioredis']),
    );
    for (const name of names) {
      const declared = cli.dependencies?.[name] ?? cli.peerDependencies?.[name];
      expect({ name, declared }).toEqual({ name, declared: expect.any(String) });
      if (cli.dependencies?.[name] === undefined)
        expect({ name, optional: cli.peerDependenciesMeta?.[name]?.optional }).toEqual({
          name,
          optional: true,
        });
    }
  });

  it('accepts the ioredis majors @sluice/redis accepts', () => {
    expect(cli.peerDependencies?.ioredis).toBe(manifest('redis').peerDependencies?.ioredis);
  });
});

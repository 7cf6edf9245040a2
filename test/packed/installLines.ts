/**
 * The install line each package README opens with, derived from the package's own package.json, so that the line
 * and the manifest cannot drift apart (test/packages-install.test.ts), and the same line with tarball paths in
 * place of the Sluice names, as the release dry run installs it before the packages are on the registry
 * (test/packed/release-dry-run.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function manifestOf(root: string, dir: string): Manifest {
  return JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as Manifest;
}

/**
 * Packages whose users run a command rather than import Sluice in their own code: their line does not name
 * @sluice/core, which comes along as a dependency.
 */
const COMMAND_ONLY = new Set(['@sluice/cli']);

/**
 * What a user names in `npm install` for `manifest`'s package: the package; @sluice/core when the package is built on
 * it, because the user's code imports rules, stores and observers from it and must get the very copy the package
 * uses (same version, a direct dependency even under pnpm's strict node_modules); every other required @sluice/*
 * peer; and every required third-party peer (the framework, the Redis client), which npm and pnpm would otherwise
 * install on their own or leave missing. Optional peers are never named: the README says when they are needed.
 */
export function installNames(manifest: Manifest): string[] {
  const peers = Object.keys(manifest.peerDependencies ?? {}).filter(
    (name) => manifest.peerDependenciesMeta?.[name]?.optional !== true,
  );
  const core =
    manifest.dependencies?.['@sluice/core'] !== undefined && !COMMAND_ONLY.has(manifest.name)
      ? ['@sluice/core']
      : [];
  return [manifest.name, ...core, ...peers.filter((name) => name !== '@sluice/core')];
}

/** The first `npm install ...` line of a README, as its words after `npm install`; undefined if there is none. */
export function readmeInstallLine(readme: string): string[] | undefined {
  const line = /^npm install (.+)$/m.exec(readme)?.[1];
  return line?.trim().split(/\s+/);
}

/**
 * Every @sluice/* package that installing `name` pulls in through `dependencies`, `name` excluded: npm cannot fetch
 * them before they are published, so a tarball install names their tarballs too (@sluice/nestjs: core, express,
 * fastify, websocket; @sluice/cli: core, envoy).
 */
export function sluiceClosure(name: string, manifests: ReadonlyMap<string, Manifest>): string[] {
  const seen = new Set<string>();
  const visit = (current: string): void => {
    for (const dependency of Object.keys(manifests.get(current)?.dependencies ?? {})) {
      if (!dependency.startsWith('@sluice/') || seen.has(dependency)) continue;
      seen.add(dependency);
      visit(dependency);
    }
  };
  visit(name);
  seen.delete(name);
  return [...seen].sort();
}

/**
 * A README's install words as the documented pre-publication install: its Sluice names as tarballs, then the
 * tarballs of the Sluice packages they depend on that the line does not name, then its third-party names.
 */
export function tarballInstallWords(
  words: readonly string[],
  manifests: ReadonlyMap<string, Manifest>,
  tarballOf: (name: string) => string,
): string[] {
  const sluice = words.filter((word) => word.startsWith('@sluice/'));
  const extra = [...new Set(sluice.flatMap((name) => sluiceClosure(name, manifests)))].filter(
    (name) => !sluice.includes(name),
  );
  return [...sluice, ...extra].map(tarballOf).concat(words.filter((word) => !word.startsWith('@sluice/')));
}

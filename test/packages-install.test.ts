/**
 * How the packages are installed and released, checked against their package.json files so that the docs cannot
 * drift: each README opens with the install line its manifest implies, RELEASING.md, the root README and the
 * getting-started pages give the tarball lines the same rules derive, ranges agree across packages, and every
 * package is in the Changesets release group with a CHANGELOG. The lines are installed for real by test/packed/release-dry-run.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  installNames,
  type Manifest,
  manifestOf,
  readmeInstallLine,
  tarballInstallWords,
} from './packed/installLines.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dirs = readdirSync(join(root, 'packages'));
const manifests = new Map<string, Manifest>(
  dirs.map((dir) => {
    const manifest = manifestOf(root, dir);
    return [manifest.name, manifest];
  }),
);
const readmeOf = (dir: string): string => readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8');
const text = (path: string): string => (existsSync(path) ? readFileSync(join(path), 'utf8') : '');

/** `./tarballs/sluice-fastify-0.1.0.tgz`, as the docs write a tarball in the folder `pnpm pack:all` fills. */
function documentedTarball(name: string): string {
  return `./tarballs/${name.replace(/^@/, '').replace('/', '-')}-${manifests.get(name)?.version}.tgz`;
}

function tarballLine(manifest: Manifest): string {
  return `npm install ${tarballInstallWords(installNames(manifest), manifests, documentedTarball).join(' ')}`;
}

describe('install lines', () => {
  it.each(dirs)('packages/%s/README.md opens with its install line, derived from its package.json', (dir) => {
    const manifest = manifestOf(root, dir);
    const readme = readmeOf(dir);
    // The first code block, before any section: right under the title and its description.
    const firstBlock = /^```(\w*)\n([^\n]*)/m.exec(readme);
    expect(firstBlock?.[1]).toBe('sh');
    expect(firstBlock?.[2]).toMatch(/^npm install /);
    expect(readme.indexOf(firstBlock?.[0] ?? '')).toBeLessThan(readme.search(/^## /m));
    const words = readmeInstallLine(readme) ?? [];
    expect(words[0]).toBe(manifest.name);
    expect([...words].sort()).toEqual([...installNames(manifest)].sort());
    expect(new Set(words).size).toBe(words.length);
  });

  it('the derivation names peers and core, never optional peers', () => {
    // Pinned examples, so that a wrong rule cannot pass by agreeing with READMEs written from it.
    expect(installNames(manifests.get('@sluice/fastify')!)).toEqual([
      '@sluice/fastify',
      '@sluice/core',
      'fastify',
    ]);
    expect(installNames(manifests.get('@sluice/redis')!)).toEqual([
      '@sluice/redis',
      '@sluice/core',
      'ioredis',
    ]);
    expect(installNames(manifests.get('@sluice/cli')!)).toEqual(['@sluice/cli']);
    expect(tarballLine(manifests.get('@sluice/nestjs')!)).toBe(
      'npm install ./tarballs/sluice-nestjs-0.1.0.tgz ./tarballs/sluice-core-0.1.0.tgz ' +
        './tarballs/sluice-express-0.1.0.tgz ./tarballs/sluice-fastify-0.1.0.tgz ' +
        './tarballs/sluice-websocket-0.1.0.tgz @nestjs/common @nestjs/core reflect-metadata rxjs',
    );
  });

  it('RELEASING.md gives the tarball line of every package; the root README that of Fastify', () => {
    const releasing = text(join(root, 'RELEASING.md'));
    const documented = releasing.split('\n').filter((line) => line.startsWith('npm install ./tarballs/'));
    expect(documented.sort()).toEqual([...manifests.values()].map(tarballLine).sort());
    const readme = text(join(root, 'README.md'));
    const install = readme.slice(
      readme.indexOf('\n## Install\n'),
      readme.indexOf('\n## ', readme.indexOf('\n## Install\n') + 1),
    );
    expect(install).toContain(tarballLine(manifests.get('@sluice/fastify')!));
    expect(install).toMatch(/pnpm(@[\d.]+)? pack:all/);
    expect(releasing).toMatch(/pnpm(@[\d.]+)? pack:all/);
  });

  it.each(['fastify', 'express', 'koa', 'hono', 'nestjs'])(
    'docs/start/%s.md: its install lines name what the adapter needs, each with its tarball line after it',
    (dir) => {
      const page = text(join(root, 'docs', 'start', `${dir}.md`)).split('\n');
      const registry = page.filter((line) => /^npm install @sluice\//.test(line));
      const tarballs = page.filter((line) => line.startsWith('npm install ./tarballs/'));
      // In memory, then with Redis: the adapter's README line (a Nest app adds its platform), then @sluice/redis's.
      expect(registry.length).toBe(2);
      const words = registry.map((line) => line.slice('npm install '.length).split(' '));
      const adapter = manifests.get(`@sluice/${dir}`)!;
      expect(words[0]).toEqual(expect.arrayContaining(installNames(adapter)));
      expect(words[1]).toEqual(
        expect.arrayContaining([...words[0]!, ...installNames(manifests.get('@sluice/redis')!)]),
      );
      // Each line's pre-publication form (tarballs for the Sluice names and those they depend on) follows it.
      expect(tarballs).toEqual(
        words.map(
          (line) => `npm install ${tarballInstallWords(line, manifests, documentedTarball).join(' ')}`,
        ),
      );
      for (const [i, line] of registry.entries())
        expect(page.indexOf(tarballs[i]!)).toBeGreaterThan(page.indexOf(line));
    },
  );

  it('pack:all writes every tarball into ./tarballs, which git ignores', () => {
    const { scripts } = JSON.parse(text(join(root, 'package.json')));
    expect(scripts['pack:all']).toBe('pnpm -r pack --pack-destination ./tarballs');
    expect(text(join(root, '.gitignore')).split('\n')).toContain('tarballs/');
  });
});

describe('ranges agree across packages', () => {
  /** name -> the distinct ranges the packages give it, in `field`. */
  function rangesIn(field: 'dependencies' | 'peerDependencies'): Map<string, Set<string>> {
    const ranges = new Map<string, Set<string>>();
    for (const manifest of manifests.values()) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        ranges.set(name, (ranges.get(name) ?? new Set()).add(range));
      }
    }
    return ranges;
  }

  it.each(['dependencies', 'peerDependencies'] as const)('%s: one range per package name', (field) => {
    const disagreeing = [...rangesIn(field)].filter(([, ranges]) => ranges.size > 1);
    expect(disagreeing.map(([name, ranges]) => `${name}: ${[...ranges].join(' vs ')}`)).toEqual([]);
  });

  it('every Sluice dependency is workspace:* (published as the exact version); Sluice peers one form', () => {
    const sluice = (ranges: Map<string, Set<string>>) =>
      [...ranges].filter(([name]) => name.startsWith('@sluice/'));
    expect(sluice(rangesIn('dependencies')).length).toBeGreaterThan(0);
    expect(sluice(rangesIn('peerDependencies')).length).toBeGreaterThan(0);
    for (const [name, ranges] of rangesIn('dependencies')) {
      if (name.startsWith('@sluice/')) expect([...ranges], name).toEqual(['workspace:*']);
    }
    for (const [name, ranges] of rangesIn('peerDependencies')) {
      if (name.startsWith('@sluice/')) expect([...ranges], name).toEqual(['workspace:>=0.1.0 <1.0.0']);
    }
  });

  it('ioredis: every package that peers on it accepts 5 and 6', () => {
    const ioredis = rangesIn('peerDependencies').get('ioredis');
    expect(ioredis).toEqual(new Set(['^5.9.0 || ^6.0.0']));
  });
});

describe('releases', () => {
  const config = JSON.parse(text(join(root, '.changeset/config.json')) || '{}');

  it('Changesets: one fixed group holding every package, published public', () => {
    expect(config.fixed).toEqual([['@sluice/*']]);
    expect(config.access).toBe('public');
    expect(config.baseBranch).toBe('main');
    // `@sluice/*` must match every package, and only ours: no package is left out of the group.
    for (const name of manifests.keys()) expect(name).toMatch(/^@sluice\/[a-z]+$/);
    expect(text(join(root, '.changeset/README.md'))).toContain('pnpm changeset');
  });

  it('root scripts: changeset, version-packages, release', () => {
    const { scripts } = JSON.parse(text(join(root, 'package.json')));
    expect(scripts.changeset).toBe('changeset');
    expect(scripts['version-packages']).toMatch(/^changeset version\b/);
    expect(scripts.release).toMatch(/changeset publish$/);
  });

  it.each(dirs)('packages/%s/CHANGELOG.md has an entry for its current version', (dir) => {
    const manifest = manifestOf(root, dir);
    const changelog = text(join(root, 'packages', dir, 'CHANGELOG.md'));
    expect(changelog.split('\n')[0]).toBe(`# ${manifest.name}`);
    expect(changelog).toContain(`\n## ${manifest.version}\n`);
  });

  it('every package shares one version', () => {
    expect(new Set([...manifests.values()].map((manifest) => manifest.version)).size).toBe(1);
  });
});

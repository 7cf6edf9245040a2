import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findCircles, importGraph, packageSources } from './importGraph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const shown = (circle: readonly string[]) => circle.join(' -> ');

describe('no file circles in packages/*/src', () => {
  const circles = findCircles(importGraph(ROOT, packageSources(ROOT))).map(shown);

  it('has no import circle between files, type-only imports included', () => {
    expect(circles).toEqual([]);
  });
});

describe('the circle finder (the check itself)', () => {
  const graph = (edges: Record<string, string[]>) =>
    new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));

  it('finds every circle once, from its smallest file, and none in a graph without one', () => {
    const circles = findCircles(graph({ a: ['b'], b: ['c', 'a'], c: ['a', 'd'], d: ['d'], e: ['a'] }));
    expect(circles.map(shown)).toEqual(['a -> b -> a', 'a -> b -> c -> a', 'd -> d']);
    expect(findCircles(graph({ a: ['b', 'c'], b: ['c'], c: [] }))).toEqual([]);
  });

  describe('on files', () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-circles-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };

    it('reads type-only, re-export and dynamic imports, resolves x.js and dir/index.js, skips tests', () => {
      write('packages/p/src/a.ts', "import type { B } from './b.js';\nexport * from './dir/index.js';\n");
      write(
        'packages/p/src/b.ts',
        "// import { no } from './a.js';\nexport type B = typeof import('./dir');\n",
      );
      write('packages/p/src/dir/index.ts', "export { c } from '../c.js';\n");
      write('packages/p/src/c.ts', "export const c = async () => import('./a.js');\n");
      write('packages/p/src/a.test.ts', "import './c.js';\n");
      write('packages/q/README.md', 'no src folder\n');
      const files = packageSources(root);
      expect(files).toEqual([
        'packages/p/src/a.ts',
        'packages/p/src/b.ts',
        'packages/p/src/c.ts',
        'packages/p/src/dir/index.ts',
      ]);
      expect(findCircles(importGraph(root, files)).map(shown)).toEqual([
        'packages/p/src/a.ts -> packages/p/src/b.ts -> packages/p/src/dir/index.ts -> packages/p/src/c.ts -> packages/p/src/a.ts',
        'packages/p/src/a.ts -> packages/p/src/dir/index.ts -> packages/p/src/c.ts -> packages/p/src/a.ts',
      ]);
    });
  });
});

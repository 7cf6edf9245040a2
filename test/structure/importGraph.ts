import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** File -> the files it imports, as paths relative to the repository's root. */
export type ImportGraph = Map<string, Set<string>>;

/** Every source file of the packages: `packages/<name>/src/**`, `.ts`, tests left out. */
export function packageSources(root: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', name, 'src');
    if (!existsSync(src)) continue;
    for (const file of readdirSync(src, { recursive: true }) as string[]) {
      if (file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts')) {
        files.push(relative(root, join(src, file)));
      }
    }
  }
  return files.sort();
}

/**
 * The relative imports of each file: static, type-only, re-exports, side-effect and dynamic ones
 * (TypeScript's own pre-scan reads them, so comments and strings are not taken for imports).
 * `./x.js` resolves to `x.ts`, `./dir/index.js` and `./dir` to `dir/index.ts`.
 */
export function importGraph(root: string, files: readonly string[]): ImportGraph {
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files) {
    const targets = new Set<string>();
    const text = readFileSync(join(root, file), 'utf8');
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolveSource(relative(root, resolve(root, dirname(file), fileName)), known);
      if (target === undefined) throw new Error(`${file}: cannot resolve '${fileName}' to a source file`);
      targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

function resolveSource(path: string, known: ReadonlySet<string>): string | undefined {
  const bare = path.replace(/\.(js|ts)$/, '');
  return [`${bare}.ts`, join(bare, 'index.ts')].find((candidate) => known.has(candidate));
}

/**
 * Every elementary circle of the graph, each as a path that comes back to its start, starting at its
 * smallest file, sorted. Johnson's idea in its simplest form: for each start, in order, the circles
 * through it that use only later files, so each circle is found once.
 */
export function findCircles(graph: ImportGraph): string[][] {
  const nodes = [...graph.keys()].sort();
  const circles: string[][] = [];
  for (const [index, start] of nodes.entries()) {
    const allowed = new Set(nodes.slice(index));
    const path = [start];
    const onPath = new Set(path);
    const walk = (node: string): void => {
      for (const next of [...(graph.get(node) ?? [])].sort()) {
        if (next === start) circles.push([...path, start]);
        else if (allowed.has(next) && !onPath.has(next)) {
          path.push(next);
          onPath.add(next);
          walk(next);
          onPath.delete(next);
          path.pop();
        }
      }
    };
    walk(start);
  }
  return circles.sort((a, b) => a.join(' ').localeCompare(b.join(' ')));
}

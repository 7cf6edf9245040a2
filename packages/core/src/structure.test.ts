import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('.', import.meta.url));

/** Core's folders, bottom to top: a folder imports only folders before it (ARCHITECTURE.md, "Layers"). */
const LAYERS = [
  'base',
  'algorithms',
  'net',
  'lists',
  'rules',
  'store',
  'observe',
  'resilience',
  'adaptive',
  'watch',
  'regions',
  'engine',
  'fields',
  'request',
  'escalation',
  'http',
  'testing',
] as const;

/** The most non-blank lines of source (tests aside) a room of core may hold (issue 41). */
const ROOM_BOUND = 2500;

/** The entries: the only top-level files, imported by nothing inside core. */
const ENTRIES = ['index.ts', 'store.ts'];

const sources = (readdirSync(SRC, { recursive: true }) as string[]).filter(
  (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
);

/** The folder of a source file ('.' for the top level). */
function folderOf(file: string): string {
  const dir = relative(SRC, dirname(file));
  return dir === '' ? '.' : dir.split('/')[0]!;
}

/** Folder -> the folders its files import, type-only imports and re-exports included, from the source. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sources) {
    const path = join(SRC, file);
    const from = folderOf(path);
    for (const [, spec] of readFileSync(path, 'utf8').matchAll(
      /(?:import|export)[^'";]*?from\s+'(\.[^']+)'/g,
    )) {
      const to = folderOf(resolve(dirname(path), spec!));
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** A loop of folders, as a path that comes back to its start; undefined when there is none. */
function findLoop(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    if (state.get(node) === 'done') return undefined;
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const loop = visit(next);
      if (loop !== undefined) return loop;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const loop = visit(node);
    if (loop !== undefined) return loop;
  }
  return undefined;
}

/** Source files (relative to src) importing a file of escalation/ other than its door, escalation/index.ts. */
function pastTheDoor(): string[] {
  const found: string[] = [];
  for (const file of sources) {
    if (file.startsWith('escalation/')) continue;
    const path = join(SRC, file);
    for (const [, spec] of readFileSync(path, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)) {
      const target = relative(SRC, resolve(dirname(path), spec!));
      if (target.startsWith('escalation/') && target !== 'escalation/index.js')
        found.push(`${file} -> ${target}`);
    }
  }
  return found;
}

/** Room -> its non-blank lines of source, tests aside (the entries at the top level are no room). */
function roomSizes(): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const file of sources) {
    const room = folderOf(join(SRC, file));
    if (room === '.') continue;
    const text = readFileSync(join(SRC, file), 'utf8');
    const lines = text.split('\n').filter((line) => line.trim() !== '').length;
    sizes.set(room, (sizes.get(room) ?? 0) + lines);
  }
  return sizes;
}

/** The rooms above `bound` non-blank lines, as `room: lines`, largest first. */
function roomsAbove(sizes: ReadonlyMap<string, number>, bound: number): string[] {
  return [...sizes]
    .filter(([, lines]) => lines > bound)
    .sort(([, a], [, b]) => b - a)
    .map(([room, lines]) => `${room}: ${lines}`);
}

/**
 * The words of a text that name a web framework: identifiers split at their humps (`fastifyTrust`: fastify,
 * trust), case ignored. Another rate limiter's package name (express-rate-limit, @fastify/rate-limit,
 * koa-ratelimit, @nestjs/throttler, hono-rate-limiter) names that library, not its framework, and is left out.
 */
function frameworkNames(text: string): string[] {
  const FRAMEWORKS = new Set(['express', 'fastify', 'koa', 'hono', 'nest', 'nestjs']);
  const plain = text.replace(/@?[\w-]+\/?[\w-]*(?:rate-?limit(?:er)?|throttler)[\w-]*/gi, ' ');
  const words = plain.match(/[A-Za-z]+/g) ?? [];
  return words
    .flatMap((word) => word.split(/(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/))
    .map((part) => part.toLowerCase())
    .filter((part) => FRAMEWORKS.has(part));
}

describe("core's structure", () => {
  const graph = folderGraph();

  it('finds a loop when there is one (the check itself)', () => {
    const looped = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
    ]);
    expect(findLoop(looped)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('has no import loop between its folders, type-only imports included', () => {
    expect(findLoop(graph)).toBe(undefined);
  });

  it('imports point down the layers only (an entry is imported by nothing inside core)', () => {
    const rank = (folder: string) => LAYERS.indexOf(folder as (typeof LAYERS)[number]);
    const upward: string[] = [];
    for (const [from, targets] of graph) {
      if (from === '.') continue;
      for (const to of targets) if (to === '.' || !(rank(to) < rank(from))) upward.push(`${from} -> ${to}`);
    }
    expect(upward).toEqual([]);
  });

  it('has only the entries at the top level, and a known layer for every folder', () => {
    expect(sources.filter((file) => !file.includes('/')).sort()).toEqual(ENTRIES);
    expect(
      [...new Set(sources.map((file) => folderOf(join(SRC, file))))].filter((f) => f !== '.').sort(),
    ).toEqual([...LAYERS].sort());
  });

  it('reaches escalation only through its door, escalation/index.ts', () => {
    expect(pastTheDoor()).toEqual([]);
  });
});

describe("core's rooms by size", () => {
  const sizes = roomSizes();

  it('names each room above the bound with its lines (the check itself, on lowered bounds)', () => {
    expect(
      roomsAbove(
        new Map([
          ['a', 2501],
          ['b', 2500],
          ['c', 2600],
        ]),
        ROOM_BOUND,
      ),
    ).toEqual(['c: 2600', 'a: 2501']);
    const smallest = Math.min(...sizes.values());
    expect(roomsAbove(sizes, smallest - 1)).toHaveLength(sizes.size);
    expect(roomsAbove(sizes, 1000).length).toBeGreaterThan(0);
  });

  it(`has no room above ${ROOM_BOUND} non-blank lines of source (tests aside): a new concept gets a room`, () => {
    expect(roomsAbove(sizes, ROOM_BOUND)).toEqual([]);
  });
});

describe('core knows no framework', () => {
  it('finds a framework in identifiers, strings and comments, not in another limiter’s package name (the check itself)', () => {
    expect(frameworkNames("new ExpressFacts(req); fastifyTrust(app); 'Koa app.proxy'; NestJS; Hono")).toEqual(
      ['express', 'fastify', 'koa', 'nest', 'hono'],
    );
    expect(
      frameworkNames('as express-rate-limit, @fastify/rate-limit and @nestjs/throttler count; nested'),
    ).toEqual([]);
  });

  it('names no framework in its source (tests aside): what a framework alone knows lives in its adapter', () => {
    const named = sources.flatMap((file) => {
      const found = frameworkNames(readFileSync(join(SRC, file), 'utf8'));
      return found.length === 0 ? [] : [`${file}: ${[...new Set(found)].join(', ')}`];
    });
    expect(named).toEqual([]);
  });
});

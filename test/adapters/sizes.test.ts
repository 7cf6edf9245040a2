import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What an adapter keeps is what its framework alone knows (where facts live, how routes are found); the
// verdict writing, the response's end and route-scope caching are core's Node and fetch layers
// (packages/core/src/http). These pin it, so a copy growing back in an adapter fails here. The request facts
// of a framework (src/facts.ts) are its own knowledge, kept in its adapter since core names no framework:
// counted apart, as what the adapter reads rather than what it translates.

const PACKAGES = fileURLToPath(new URL('../../packages/', import.meta.url));
/**
 * At most 150 non-blank lines an adapter; Fastify 175: it alone marks websocket routes for @sluice/websocket,
 * moves `afterBody` routes into preValidation, and refuses a second register and a misspelled `config` key
 * (Fastify's own errors name neither), all Fastify's knowledge, in its adapter by issue 41.
 */
const MAX_LINES: Readonly<Record<string, number>> = { express: 150, koa: 150, fastify: 175, hono: 150 };

/** An adapter's source files that are not tests (its request facts, src/facts.ts, apart). */
function sourceFiles(name: string): string[] {
  const dir = join(PACKAGES, name, 'src');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && file !== 'facts.ts')
    .map((file) => join(dir, file));
}

/** Non-blank lines of an adapter's source, as `grep -cv '^\s*$'` counts them. */
function nonBlankLines(name: string): number {
  let lines = 0;
  for (const file of sourceFiles(name))
    lines += readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '').length;
  return lines;
}

const source = (name: string): string =>
  sourceFiles(name)
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');

describe('adapter sizes', () => {
  for (const [name, max] of Object.entries(MAX_LINES)) {
    it(`@sluice/${name} is at most ${max} non-blank lines`, () => {
      const lines = nonBlankLines(name);
      expect(lines).toBeGreaterThan(30); // The count reads the real sources, not an empty folder.
      expect(lines).toBeLessThanOrEqual(max);
    });
  }

  it('the Node and fetch adapters carry no verdict writing of their own: they use the layers', () => {
    for (const name of ['express', 'koa', 'fastify', 'nestjs'])
      expect({ name, writer: /nodeVerdictWriter[<(]/.test(source(name)) }).toEqual({ name, writer: true });
    expect(source('hono')).toMatch(/fetchVerdictWriter[<(]/);
    for (const name of ['express', 'koa', 'fastify', 'hono', 'nestjs']) {
      // The writer's parts (the response's end, the leaky_bucket wait) are the layers' alone.
      expect({
        name,
        own: /reportWhenDone|waitUnlessClosed|[^.]verdictWriter[<(]/.test(source(name)),
      }).toEqual({
        name,
        own: false,
      });
    }
  });

  it('NestJS reuses the Express and Fastify facts and the route-scope cache: no copies', () => {
    const nest = source('nestjs');
    expect(nest).toMatch(/new ExpressFacts\(/);
    expect(nest).toMatch(/new FastifyFacts\(/);
    expect(nest).toMatch(/new RouteScopes\(/);
    expect(nest).not.toMatch(/class \w*Facts\b/);
    expect(nest).not.toMatch(/new WeakMap/);
    expect(source('fastify')).not.toMatch(/class \w*Facts\b/);
  });
});

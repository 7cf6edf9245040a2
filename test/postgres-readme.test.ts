/**
 * The five-line Fastify example that opens packages/postgres/README.md, run as written (the block below is compared
 * with the README's, line for line) on a private PostgreSQL, through real HTTP: the 101st request is refused.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSuite } from './support/postgres.js';

const README = new URL('../packages/postgres/README.md', import.meta.url);
const suite = postgresSuite();

/** The first ```ts block of the README, its lines trimmed. */
function readmeExample(): string[] {
  const text = readFileSync(README, 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  return block.trim().split('\n');
}

/** The README's example, written out here: `app` comes back so that the test can add a route and close it. */
async function example(): Promise<FastifyInstance> {
  // README example begins
  const { rateLimit } = await import('@sluice/fastify');
  const { PostgresStore } = await import('@sluice/postgres');
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  await app.register(rateLimit, {
    limit: 100,
    per: '1m',
    store: new PostgresStore({ connectionString: process.env.DATABASE_URL, createTable: true }),
  });
  // README example ends
  return app;
}

/** This file's copy of the example, as the static imports the README writes. */
function ourExample(): string[] {
  const source = readFileSync(new URL(import.meta.url), 'utf8');
  const body = source.split('// README example begins\n')[1]!.split('  // README example ends')[0]!;
  return body
    .trim()
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/^const \{ default: (\w+) \} = await import\('(.+)'\);$/, "import $1 from '$2';")
        .replace(/^const \{ (.+) \} = await import\('(.+)'\);$/, "import { $1 } from '$2';"),
    );
}

/** Code without its layout (whitespace, trailing commas), as the formatter may wrap this file's copy. */
function tokens(lines: string[]): string {
  return lines
    .join('')
    .replace(/\s+/g, '')
    .replace(/,(?=[})\]])/g, '');
}

describe('the README example of @sluice/postgres', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    process.env.DATABASE_URL = suite.server.url;
    app = await example();
    app.get('/', async () => 'ok');
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    delete process.env.DATABASE_URL;
  });

  it('is five lines, the code this test runs', () => {
    expect(readmeExample()).toHaveLength(5);
    expect(tokens(readmeExample())).toBe(tokens(ourExample()));
  });

  it('counts in PostgreSQL: 100 requests a minute pass, the 101st gets 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await fetch(url)).status);
    expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
  });
});

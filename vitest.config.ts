import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = [
  'core',
  'redis',
  'prometheus',
  'geoip',
  'postgres',
  'opentelemetry',
  'fastify',
  'express',
  'koa',
  'cli',
  'client',
  'hono',
  'nestjs',
  'envoy',
  'websocket',
  'graphql',
];

// Tests import @sluice/* from source, so the suite needs no build step.
export default defineConfig({
  resolve: {
    alias: {
      // Core's subpath entries before the packages: the first alias that matches a specifier wins.
      '@sluice/core/store': fileURLToPath(new URL('./packages/core/src/store.ts', import.meta.url)),
      ...Object.fromEntries(
        ['http', 'testing'].map((entry) => [
          `@sluice/core/${entry}`,
          fileURLToPath(new URL(`./packages/core/src/${entry}/index.ts`, import.meta.url)),
        ]),
      ),
      // Adapter authors' subpath entries (NestJS reads the Express and Fastify request facts).
      ...Object.fromEntries(
        ['express', 'fastify'].map((name) => [
          `@sluice/${name}/facts`,
          fileURLToPath(new URL(`./packages/${name}/src/facts.ts`, import.meta.url)),
        ]),
      ),
      // @sluice/graphql's server plugins, an entry each.
      ...Object.fromEntries(
        ['apollo', 'yoga', 'mercurius'].map((name) => [
          `@sluice/graphql/${name}`,
          fileURLToPath(new URL(`./packages/graphql/src/${name}.ts`, import.meta.url)),
        ]),
      ),
      ...Object.fromEntries(
        packages.map((name) => [
          `@sluice/${name}`,
          fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url)),
        ]),
      ),
    },
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    globalSetup: [],
    // Generous: many tests start servers and subprocesses (tsx, npm, redis-server), slow on a loaded 2-core CI box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

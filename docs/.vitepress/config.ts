import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitepress';

const DOCS = join(import.meta.dirname, '..');

/** The pages `pnpm docs:gen` writes; while one is not there, links to it are not dead (it is being written). */
const GENERATED = ['reference/rules.md', 'reference/options.md', 'api/index.md'];

/**
 * The site works offline: every asset is in dist. VitePress's default theme ships Inter as local woff2 files and
 * only adds Google Fonts when `useWebFonts` is on, so it stays off; search is the built-in local (minisearch)
 * index, fetched from this site; no Algolia, no Carbon ads, no analytics. test/docs/site.test.ts blocks every
 * request that leaves loopback and asserts none was attempted.
 */
export default defineConfig({
  title: 'Sluice',
  description:
    'Rate limiting for Node.js services: one engine, rules in a reviewed YAML file, thin adapters.',
  lang: 'en',
  cleanUrls: false,
  useWebFonts: false,
  lastUpdated: false,
  // VitePress fails the build on a dead link; the generated pages count once they exist.
  ignoreDeadLinks: GENERATED.filter((page) => !existsSync(join(DOCS, page))).map(
    (page) => new RegExp(`^\\.{0,2}/?(?:\\.\\./)?${page.replace(/(index)?\.md$/, '')}`),
  ),
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Get started', link: '/start/fastify' },
      { text: 'Guides', link: '/guide/rules' },
      { text: 'Reference', link: '/reference/rules' },
      { text: 'API', link: '/api/' },
    ],
    sidebar: [
      {
        text: 'Get started',
        items: [
          { text: 'Fastify', link: '/start/fastify' },
          { text: 'Express', link: '/start/express' },
          { text: 'Koa', link: '/start/koa' },
          { text: 'Hono', link: '/start/hono' },
          { text: 'NestJS', link: '/start/nestjs' },
          { text: 'The example API', link: '/guide/example-api' },
        ],
      },
      {
        text: 'Guides',
        items: [
          { text: 'Adapters: options and responses', link: '/guide/adapters' },
          { text: 'Rules', link: '/guide/rules' },
          { text: 'Algorithms', link: '/guide/algorithms' },
          { text: 'Policies', link: '/guide/policies' },
          { text: 'Escalation', link: '/guide/escalation' },
          { text: 'The engine in code', link: '/guide/engine' },
          { text: 'Stores', link: '/guide/stores' },
          { text: 'Redis and Redis Cluster', link: '/guide/redis' },
          { text: 'PostgreSQL', link: '/guide/postgres' },
          { text: 'Regions', link: '/guide/regions' },
          { text: 'Long-lived connections', link: '/guide/long-lived' },
          { text: 'Envoy and Istio', link: '/guide/envoy' },
          { text: 'Token budgets', link: '/guide/token-budgets' },
          { text: 'GraphQL', link: '/guide/graphql' },
          { text: 'Clients', link: '/guide/clients' },
          { text: 'Operating Sluice', link: '/guide/operating' },
          { text: 'Watching limits', link: '/guide/watching' },
          { text: 'Failure modes', link: '/guide/failure-modes' },
          { text: 'Performance', link: '/guide/performance' },
          { text: 'Migrating', link: '/guide/migration' },
          { text: 'Development', link: '/guide/development' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Rules (generated)', link: '/reference/rules' },
          { text: 'Options (generated)', link: '/reference/options' },
          { text: 'Algorithms under one burst (generated)', link: '/reference/algorithms-charts' },
          { text: 'API (generated)', link: '/api/' },
        ],
      },
      { text: 'About the docs', items: [{ text: 'About the docs', link: '/about' }] },
    ],
  },
});

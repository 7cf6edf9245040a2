/**
 * Rules on the GraphQL descriptors, over real HTTP (Yoga on node:http, MemoryStore), and what goes wrong around
 * the budget: a wrong option refused at start-up with a did-you-mean; inside an adapter (Yoga in Express), a
 * GraphQL route not decided after its body refused (never run unpriced); another route's denial left to the adapter; an estimator
 * that throws lets operations through, said once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileRules, createLimiter, MemoryStore, type RuleSpec, type Store } from '@sluice/core';
import { rateLimit } from '@sluice/express';
import { type CostEstimator, graphqlHooks } from '@sluice/graphql';
import { apolloCostBudget } from '@sluice/graphql/apollo';
import { useCostBudget } from '@sluice/graphql/yoga';
import express from 'express';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUDGET, codeOf, estimateOf, estimator, post, resolvers, SDL, world } from './support.js';

const schema = createSchema({ typeDefs: SDL, resolvers });
const servers: Server[] = [];
beforeEach(() => world.reset());
afterEach(async () => {
  await Promise.all(servers.splice(0).map((one) => new Promise((resolve) => one.close(resolve))));
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

/** Yoga standalone on these rules; `costs` stands in for the schema's estimator. */
function yogaOn(
  rules: readonly RuleSpec[],
  costs: CostEstimator = estimator,
  logger = console,
  store: Store = new MemoryStore(),
) {
  const limiter = createLimiter({ rules: compileRules({ domain: 'gql', rules }), store, logger });
  const plugin = useCostBudget({
    estimator: costs,
    limiter,
    logger,
    descriptors: ({ request }) => ({ api_key: request.headers.get('x-api-key') ?? undefined }),
  });
  const yoga = createYoga({ schema, logging: false, plugins: [plugin] });
  return listen(createServer(yoga));
}

describe('rules on the GraphQL descriptors', () => {
  it('match one root field whatever else the operation selects, and whatever alias it is given', async () => {
    const url = await yogaOn([
      BUDGET,
      {
        name: 'searches',
        match: { 'graphql_field.search': 'true' },
        key: ['api_key'],
        limit: { requests: 2, per: '1m' },
      },
    ]);
    expect((await post(url, { query: '{ search(term: "a") { title } }' })).status).toBe(200);
    expect(
      (await post(url, { query: '{ found: search(term: "b") { title } books(first: 1) { title } }' })).status,
    ).toBe(200);
    const third = await post(url, { query: 'query Hidden { s: search(term: "c") { title } }' });
    expect(codeOf(third.body)).toBe('THROTTLED');
    expect(third.body.errors?.[0]?.extensions?.rule).toBe('searches');
    expect((await post(url, { query: '{ books(first: 1) { title } }' })).status).toBe(200);
    expect(world.calls.search).toBe(2);
  });

  it('refuse a client by the name it gives in apollographql-client-name, and key by operation name', async () => {
    const url = await yogaOn([
      BUDGET,
      { name: 'scrapers', match: { graphql_client_name: ['scraper'] }, action: 'deny' },
      { name: 'per_operation', key: ['api_key', 'graphql_operation'], limit: { requests: 1, per: '1m' } },
    ]);
    const refused = await post(url, { query: 'query A { books(first: 1) { title } }' }, 'key-a', {
      'apollographql-client-name': 'scraper',
      'apollographql-client-version': '1.0',
    });
    expect(refused.status).toBe(403);
    expect(codeOf(refused.body)).toBe('FORBIDDEN');
    expect((await post(url, { query: 'query A { books(first: 1) { title } }' })).status).toBe(200);
    expect((await post(url, { query: 'query B { books(first: 1) { title } }' })).status).toBe(200);
    expect(codeOf((await post(url, { query: 'query A { books(first: 1) { title } }' })).body)).toBe(
      'THROTTLED',
    );
    expect(world.calls.books).toBe(2);
  });
});

describe('what goes wrong around the budget', () => {
  it('refuses a wrong option at start-up, with a did-you-mean', () => {
    const limiter = createLimiter({ rules: compileRules({ domain: 'gql', rules: [BUDGET] }) });
    expect(() => useCostBudget({ estimator, limiter, maxcost: 10 } as never)).toThrow(
      'useCostBudget: unknown option "maxcost" (did you mean "maxCost"?)',
    );
    expect(() => apolloCostBudget({ estimator, limiter, batch: 'all' } as never)).toThrow(
      `apolloCostBudget: option "batch" must be 'each' or 'whole', not "all"`,
    );
    const hooks = graphqlHooks(estimator);
    expect(() => useCostBudget({ hooks, maxCost: 10 } as never)).toThrow(
      "inside an adapter the budget's options go to graphqlHooks(...), not here: maxCost",
    );
    expect(() => graphqlHooks(estimator, { maxCost: -1 })).toThrow('option "maxCost" must be a whole number');
  });

  it('inside an adapter, refuses a GraphQL route decided before its body was parsed: nothing runs unpriced', async () => {
    const hooks = graphqlHooks(estimator);
    const limiter = rateLimit({
      rules: { domain: 'gql', rules: [BUDGET] },
      store: new MemoryStore(),
      descriptors: hooks.descriptors,
    });
    const app = express();
    // Yoga in Express, the limiter before the body parser and no afterBody route: decided on no body.
    app.use(limiter);
    app.post(
      '/graphql',
      express.json(),
      createYoga({ schema, logging: false, plugins: [useCostBudget({ hooks })] }),
    );
    const answer = await post(await listen(createServer(app)), { query: '{ books(first: 1) { title } }' });
    expect(codeOf(answer.body)).toBe('COST_NOT_PRICED');
    expect(answer.body.errors?.[0]?.message).toMatch(/after its body is parsed \(afterBody\)/);
    expect(world.total()).toBe(0);
  });

  it("leaves another route's denial to the adapter: only the requests the hooks priced get a GraphQL answer", async () => {
    const hooks = graphqlHooks(estimator);
    const denied = { decision: { retryAfterMs: 1000 } } as Parameters<typeof hooks.denial>[1];
    expect(hooks.denial({ headers: {}, url: '/other', body: { name: 'x' } }, denied)).toBeUndefined();
    const req = { headers: {}, url: '/graphql', body: { query: '{ books(first: 1) { title } }' } };
    expect(hooks.descriptors(req)).toMatchObject({ graphql_type: 'query', graphql_fields: 'books' });
    expect(hooks.descriptors({ headers: {}, url: '/other?x=1', body: { name: 'x' } })).toEqual({
      graphql_cost: '0',
    });
  });

  it("reads a GET's operation from its URL, and charges nothing for unreadable variables", () => {
    const hooks = graphqlHooks(estimator);
    const query = encodeURIComponent('query Q($n: Int!) { books(first: $n) { title } }');
    const good = { headers: {}, url: `/graphql?query=${query}&variables=${encodeURIComponent('{"n":2}')}` };
    expect(hooks.descriptors(good)).toMatchObject({ graphql_operation: 'Q', graphql_fields: 'books' });
    expect(Number(hooks.descriptors(good).graphql_cost)).toBeGreaterThan(0);
    const bad = { headers: {}, url: `/graphql?query=${query}&variables=%7Bnope` };
    expect(hooks.descriptors(bad)).toEqual({ graphql_cost: '0' });
  });

  it('serves operations while the store is down (failed open), never a 500', async () => {
    const down: Store = {
      evaluate: () => Promise.reject(new Error('connection refused')),
      release: () => Promise.reject(new Error('connection refused')),
      close: () => Promise.resolve(),
    };
    const url = await yogaOn([BUDGET], estimator, { ...console, warn: () => {} }, down);
    const answer = await post(url, { query: '{ books(first: 1) { title } }' });
    expect(answer.status).toBe(200);
    expect(answer.body.data?.books).toHaveLength(1);
    expect(answer.body.extensions?.cost).toMatchObject({
      requestedQueryCost: estimateOf('{ books(first: 1) { title } }').cost,
    });
  });

  it('lets operations through when the estimator throws, and says so once', async () => {
    const lines: string[] = [];
    const broken: CostEstimator = {
      estimate: () => {
        throw new Error('boom');
      },
      actual: () => 0,
    };
    const url = await yogaOn([BUDGET], broken, { ...console, warn: (line: string) => void lines.push(line) });
    expect((await post(url, { query: '{ books(first: 1) { title } }' })).status).toBe(200);
    expect((await post(url, { query: '{ books(first: 1) { title } }' })).status).toBe(200);
    expect(world.calls.books).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^SLUICE_GRAPHQL_ESTIMATE_FAILED: the cost estimator threw.*: Error: boom$/);
  });
});

/**
 * Apollo Server 5 with @sluice/graphql over real HTTP, on MemoryStore, a private Redis and a private PostgreSQL:
 * standalone (startStandaloneServer, the plugin deciding with limiter.check), and inside @sluice/express
 * (expressMiddleware of @as-integrations/express5, the GraphQL route decided after its body in the adapter's
 * one store call with the HTTP rules).
 */
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { expressMiddleware } from '@as-integrations/express5';
import { compileRules, createLimiter } from '@sluice/core';
import { rateLimit } from '@sluice/express';
import { graphqlHooks } from '@sluice/graphql';
import { apolloCostBudget } from '@sluice/graphql/apollo';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { budgetScenarios, type ServerKind, T0 } from './scenarios.js';
import {
  BUDGET,
  EvaluationCounter,
  estimator,
  MAX_COST,
  PER_IP,
  post,
  resolvers,
  SDL,
  storeSuites,
  world,
} from './support.js';

const stores = storeSuites();

const standalone: ServerKind = {
  name: 'Apollo Server standalone',
  inAdapter: false,
  async make({ store, clock, batch, throttledStatus }) {
    const limiter = createLimiter({ rules: compileRules({ domain: 'gql', rules: [BUDGET] }), store, clock });
    const server = new ApolloServer({
      typeDefs: SDL,
      resolvers,
      allowBatchedHttpRequests: true,
      plugins: [
        apolloCostBudget({
          estimator,
          limiter,
          maxCost: MAX_COST,
          ...(batch && { batch }),
          ...(throttledStatus && { throttledStatus }),
          descriptors: (rc) => ({ api_key: rc.request.http?.headers.get('x-api-key') }),
        }),
      ],
    });
    const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
    return { url, limiter, close: () => server.stop() };
  },
};

/** Apollo inside @sluice/express: the GraphQL route decided after its body, with the hooks' descriptors. */
async function inExpress({ store, clock, throttledStatus }: Parameters<ServerKind['make']>[0]) {
  const hooks = graphqlHooks(estimator, { maxCost: MAX_COST, ...(throttledStatus && { throttledStatus }) });
  const limiter = rateLimit({
    rules: { domain: 'gql', rules: [BUDGET, PER_IP] },
    store,
    clock,
    descriptors: hooks.descriptors,
    onDenied: (req, res, denied) => {
      const answer = hooks.denial(req, denied);
      if (answer !== undefined) res.status(answer.status).set(answer.headers).json(answer.body);
    },
  });
  const server = new ApolloServer<{ req: express.Request }>({
    typeDefs: SDL,
    resolvers,
    allowBatchedHttpRequests: true,
    plugins: [apolloCostBudget({ hooks })],
  });
  await server.start();
  const app = express();
  app.use(limiter);
  // A route, not a mount: the global middleware finds it and leaves it to the route's afterBody check.
  app.post(
    '/graphql',
    express.json(),
    limiter.route(
      { name: 'graphql_route', key: ['ip'], limit: { requests: 500, per: '1m' } },
      { afterBody: true },
    ),
    expressMiddleware(server, { context: async ({ req }) => ({ req }) }),
  );
  app.get('/health', (_req, res) => void res.json({ ok: true }));
  const http = await new Promise<import('node:http').Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    limiter: limiter.limiter,
    close: async () => {
      await server.stop();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

const inAdapter: ServerKind = { name: 'Apollo Server in @sluice/express', inAdapter: true, make: inExpress };

budgetScenarios(standalone, stores);
budgetScenarios(inAdapter, stores);

describe('Apollo Server in @sluice/express: one store call', () => {
  it('decides the GraphQL budget with the HTTP rules of the request in ONE store call, and settles in one more', async () => {
    world.reset();
    world.stock = 3;
    const store = new EvaluationCounter(stores[0]!.make());
    const harness = await inExpress({ store, clock: () => T0 });
    try {
      const answer = await post(harness.url, { query: 'query Few { books(first: 10) { title } }' });
      expect(answer.status).toBe(200);
      expect(store.calls).toHaveLength(1);
      expect([...store.calls[0]!].sort()).toEqual(['graphql_points', 'graphql_route', 'per_ip']);
      expect(store.settles).toBe(1);
      // A request of another route: the HTTP rule alone, the budget (it matches GraphQL types) not at all.
      await fetch(harness.url.replace('/graphql', '/health'));
      expect(store.calls[1]).toEqual(['per_ip']);
    } finally {
      await harness.close();
    }
  });
});

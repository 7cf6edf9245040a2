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
import { rateLimit } from '@sluice/express';
import { apolloCostBudget } from '@sluice/graphql/apollo';
import express from 'express';
import { budgetScenarios, type ServerKind } from './scenarios.js';
import * as support from './support.js';

const stores = support.storeSuites();

const standalone: ServerKind = {
  name: 'Apollo Server standalone',
  inAdapter: false,
  async make({ store, clock, batch, throttledStatus }) {
    const limiter = support.budgetLimiter(store, clock);
    const server = new ApolloServer({
      typeDefs: support.SDL,
      resolvers: support.resolvers,
      allowBatchedHttpRequests: true,
      plugins: [
        apolloCostBudget({
          ...support.budgetOptions({ batch, throttledStatus }),
          limiter,
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
  const hooks = support.budgetHooks({ throttledStatus });
  const limiter = rateLimit({
    ...support.adapterOptions(hooks, { store, clock }),
    onDenied: (req, res, denied) => {
      const answer = hooks.denial(req, denied);
      if (answer !== undefined) res.status(answer.status).set(answer.headers).json(answer.body);
    },
  });
  const server = new ApolloServer<{ req: express.Request }>({
    typeDefs: support.SDL,
    resolvers: support.resolvers,
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
    limiter.route(support.ROUTE_RULE, { afterBody: true }),
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

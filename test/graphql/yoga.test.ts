/**
 * GraphQL Yoga 5 with @sluice/graphql's envelop plugin over real HTTP, on MemoryStore, a private Redis and a
 * private PostgreSQL: standalone on node:http (the plugin deciding with limiter.check), and inside @sluice/koa
 * (the GraphQL route decided after its body in the adapter's one store call with the HTTP rules).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import { useCostBudget } from '@sluice/graphql/yoga';
import { rateLimit } from '@sluice/koa';
import { createSchema, createYoga } from 'graphql-yoga';
import Koa from 'koa';
import { budgetScenarios, type HarnessOptions, type ServerKind } from './scenarios.js';
import * as support from './support.js';

const stores = support.storeSuites();
const schema = createSchema({ typeDefs: support.SDL, resolvers: support.resolvers });

async function listen(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const standalone: ServerKind = {
  name: 'Yoga standalone on node:http',
  inAdapter: false,
  async make({ store, clock, batch, throttledStatus }) {
    const limiter = support.budgetLimiter(store, clock);
    const yoga = createYoga({
      schema,
      batching: true,
      logging: false,
      plugins: [
        useCostBudget({
          ...support.budgetOptions({ batch, throttledStatus }),
          limiter,
          descriptors: ({ request }) => ({ api_key: request.headers.get('x-api-key') ?? undefined }),
        }),
      ],
    });
    return { ...(await listen(createServer(yoga))), limiter };
  },
};

/** Yoga inside @sluice/koa: the route decided after @koa/bodyparser, Yoga given Koa's context. */
async function inKoa({ store, clock, throttledStatus }: HarnessOptions) {
  const hooks = support.budgetHooks({ throttledStatus });
  const limiter = rateLimit({
    ...support.adapterOptions(hooks, { store, clock }),
    onDenied: (ctx, denied) => {
      const answer = hooks.denial(ctx, denied);
      if (answer === undefined) return;
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.body = answer.body;
    },
  });
  const yoga = createYoga<Koa.Context>({
    schema: createSchema<Koa.Context>({ typeDefs: support.SDL, resolvers: support.resolvers }),
    batching: true,
    logging: false,
    plugins: [useCostBudget({ hooks })],
  });
  const router = new Router();
  router.post(
    '/graphql',
    bodyParser(),
    limiter.route(support.ROUTE_RULE, { afterBody: true }),
    async (ctx) => {
      // The body is parsed already: Yoga is given it as a fetch Request, and Koa's context as its own.
      const response = await yoga.fetch(
        `http://localhost${ctx.url}`,
        {
          method: 'POST',
          headers: ctx.headers as Record<string, string>,
          body: JSON.stringify(ctx.request.body),
        },
        ctx,
      );
      ctx.status = response.status;
      response.headers.forEach((value, name) => void ctx.set(name, value));
      ctx.body = await response.text();
    },
  );
  router.get('/health', (ctx) => {
    ctx.body = { ok: true };
  });
  const app = new Koa();
  app.use(limiter);
  app.use(router.routes());
  return { ...(await listen(createServer(app.callback()))), limiter: limiter.limiter };
}

const inAdapter: ServerKind = { name: 'Yoga in @sluice/koa', inAdapter: true, make: inKoa };

budgetScenarios(standalone, stores);
budgetScenarios(inAdapter, stores);

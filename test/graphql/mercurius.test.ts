import { rateLimit } from '@sluice/fastify';
import { mercuriusCostBudget } from '@sluice/graphql/mercurius';
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { budgetScenarios, type HarnessOptions, type ServerKind } from './scenarios.js';
import * as support from './support.js';

const stores = support.storeSuites();

async function start(app: ReturnType<typeof Fastify>): Promise<{ url: string; close: () => Promise<void> }> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${address}/graphql`, close: () => app.close() };
}

const standalone: ServerKind = {
  name: 'Mercurius standalone',
  inAdapter: false,
  async make({ store, clock, batch, throttledStatus }) {
    const limiter = support.budgetLimiter(store, clock);
    const app = Fastify();
    await app.register(mercurius, {
      schema: support.SDL,
      resolvers: support.resolvers,
      allowBatchedQueries: true,
    });
    mercuriusCostBudget(app, {
      ...support.budgetOptions({ batch, throttledStatus }),
      limiter,
      descriptors: (context) => ({
        api_key: context.reply.request.headers['x-api-key'] as string | undefined,
      }),
    });
    return { ...(await start(app)), limiter };
  },
};

/** Mercurius inside @sluice/fastify: its route decided after Fastify parsed the body. */
async function inFastify({ store, clock, throttledStatus }: HarnessOptions) {
  const hooks = support.budgetHooks({ throttledStatus });
  const app = Fastify();
  await app.register(rateLimit, {
    ...support.adapterOptions(hooks, { store, clock }),
    onDenied: (request, reply, denied) => {
      const answer = hooks.denial(request, denied);
      if (answer !== undefined) reply.code(answer.status).headers(answer.headers).send(answer.body);
    },
  });
  await app.register(mercurius, {
    schema: support.SDL,
    resolvers: support.resolvers,
    allowBatchedQueries: true,
    additionalRouteOptions: {
      config: {
        rateLimit: {
          rules: [support.ROUTE_RULE],
          afterBody: true,
        },
      },
    },
  });
  mercuriusCostBudget(app, { hooks });
  app.get('/health', async () => ({ ok: true }));
  return { ...(await start(app)), limiter: app.rateLimiter };
}

const inAdapter: ServerKind = { name: 'Mercurius in @sluice/fastify', inAdapter: true, make: inFastify };

budgetScenarios(inAdapter, stores);
budgetScenarios(standalone, stores);

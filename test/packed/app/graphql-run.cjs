// What the @sluice/graphql programs share: one schema annotated with the IBM cost directives, a budget of 15 points
// an hour, and each server plugin (Apollo Server, GraphQL Yoga, Mercurius on Fastify) answering the same query of
// 12 estimated points twice, in process: the first with extensions.cost, the second THROTTLED (429).
const { ApolloServer } = require('@apollo/server');
const Fastify = require('fastify');
const { buildSchema } = require('graphql');
const { createSchema, createYoga } = require('graphql-yoga');
const mercurius = require('mercurius');

const QUERY = '{ books(first: 10) { title } }';
const resolvers = {
  Query: { books: (_, { first }) => Array.from({ length: first }, (_x, i) => ({ title: `Book ${i}` })) },
};

/** The first error's code, else the status and the cost the answer carries. */
function answer(status, body) {
  const code = body.errors?.[0]?.extensions?.code;
  return code === undefined ? [status, body.extensions?.cost?.requestedQueryCost] : [status, code];
}

module.exports = async function run(m) {
  const sdl = `${m.graphql.costDirectivesSdl}
type Book { title: String! }
type Query { books(first: Int!): [Book!]! @listSize(slicingArguments: ["first"]) }`;
  const estimator = m.graphql.costEstimator(buildSchema(sdl));
  const budget = () => ({
    estimator,
    limiter: m.core.createLimiter({
      rules: m.core.compileRules({
        rules: [
          {
            name: 'points',
            key: ['graphql_type'],
            limit: { requests: 15, per: '1h' },
            cost: { descriptor: 'graphql_cost', max: 100 },
            settle: true,
          },
        ],
      }),
      store: new m.core.MemoryStore(),
    }),
  });
  const twice = async (send) => [answer(...(await send())), answer(...(await send()))];

  const apollo = new ApolloServer({
    typeDefs: sdl,
    resolvers,
    plugins: [m.apollo.apolloCostBudget(budget())],
  });
  await apollo.start();
  const viaApollo = await twice(async () => {
    const { http, body } = await apollo.executeOperation({ query: QUERY });
    return [http.status ?? 200, body.singleResult];
  });
  await apollo.stop();

  const yoga = createYoga({
    schema: createSchema({ typeDefs: sdl, resolvers }),
    plugins: [m.yoga.useCostBudget(budget())],
    logging: false,
  });
  const viaYoga = await twice(async () => {
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: QUERY }),
    });
    return [response.status, await response.json()];
  });

  const app = Fastify();
  await app.register(mercurius, { schema: sdl, resolvers });
  m.mercurius.mercuriusCostBudget(app, budget());
  const viaMercurius = await twice(async () => {
    const response = await app.inject({ method: 'POST', url: '/graphql', payload: { query: QUERY } });
    return [response.statusCode, response.json()];
  });
  await app.close();

  const estimate = estimator.estimate({ query: QUERY });
  console.log(
    JSON.stringify({
      estimate: estimate.ok && estimate.cost,
      apollo: viaApollo,
      yoga: viaYoga,
      mercurius: viaMercurius,
    }),
  );
};

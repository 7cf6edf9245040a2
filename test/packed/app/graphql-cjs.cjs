// @sluice/graphql and its three server entries through require.
const core = require('@sluice/core');
const graphql = require('@sluice/graphql');
const apollo = require('@sluice/graphql/apollo');
const mercurius = require('@sluice/graphql/mercurius');
const yoga = require('@sluice/graphql/yoga');
const run = require('./graphql-run.cjs');

run({ core, graphql, apollo, yoga, mercurius }).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});

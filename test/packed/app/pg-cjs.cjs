// @sluice/postgres through require.
const postgres = require('@sluice/postgres');
const run = require('./pg-run.cjs');

run(postgres, process.env.SLUICE_PG_URL, 'cjs_');

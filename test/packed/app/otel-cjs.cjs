// @sluice/opentelemetry through require.
const core = require('@sluice/core');
const { openTelemetryObserver } = require('@sluice/opentelemetry');
const run = require('./otel-run.cjs');

run(openTelemetryObserver, core);

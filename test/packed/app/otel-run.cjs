// What the OpenTelemetry programs share: an SDK set up as a service would (in-memory exporters, to read back what
// was recorded), three checks of a 2-a-minute rule inside one active span each, and what the span and meter got.
const { context } = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const metrics = require('@opentelemetry/sdk-metrics');
const traces = require('@opentelemetry/sdk-trace-base');

module.exports = async function run(openTelemetryObserver, core) {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const spans = new traces.InMemorySpanExporter();
  const tracer = new traces.BasicTracerProvider({
    spanProcessors: [new traces.SimpleSpanProcessor(spans)],
  }).getTracer('app');
  const exporter = new metrics.InMemoryMetricExporter(metrics.AggregationTemporality.CUMULATIVE);
  const reader = new metrics.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const meterProvider = new metrics.MeterProvider({ readers: [reader] });

  const rules = core.compileRules({
    rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 2, per: '60s' } }],
  });
  const limiter = core.createLimiter({
    rules,
    observer: openTelemetryObserver({ meter: meterProvider.getMeter('app') }),
  });
  for (let i = 0; i < 3; i++) {
    await tracer.startActiveSpan('request', async (span) => {
      await limiter.check({ ip: '192.0.2.1' });
      span.end();
    });
  }
  await reader.forceFlush();
  const recorded = exporter
    .getMetrics()
    .at(-1)
    .scopeMetrics.flatMap((scope) => scope.metrics);
  const decisions = recorded.find((metric) => metric.descriptor.name === 'sluice_decisions_total');
  console.log(
    JSON.stringify({
      outcomes: spans.getFinishedSpans().map((span) => span.attributes['sluice.outcome']),
      events: spans.getFinishedSpans().map((span) => span.events.map((event) => event.name)),
      decisions: decisions.dataPoints.map((point) => [point.attributes.outcome, point.value]).sort(),
    }),
  );
  await meterProvider.shutdown();
};

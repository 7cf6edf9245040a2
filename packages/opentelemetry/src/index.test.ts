import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ConfigError, type Store } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { randomPrefix, ready, startRedis } from '../../../test/support/redis.js';
import { DENIED_EVENT, metricNames, openTelemetryObserver } from './index.js';

const rules = { rules: [{ name: 'per_ip', key: ['ip'], limit: { requests: 2, per: '60s' } }] };
const IP = '127.0.0.1';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

/** An SDK set up as a service would, with in-memory exporters to read what was recorded. */
function telemetry() {
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('t');
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 60_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  /** The points of metric `name`, as last collected. */
  async function points(name: string): Promise<DataPoint<unknown>[]> {
    await reader.forceFlush();
    const last = metricExporter.getMetrics().at(-1);
    const metric = last?.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
  }
  return {
    spans,
    tracer,
    meter: meterProvider.getMeter('sluice-test'),
    points,
    close: () => meterProvider.shutdown(),
  };
}

/**
 * A Fastify app whose every request runs inside a span, as HTTP instrumentation starts one: the span is active
 * from the socket's request event, and ends when the response is closed.
 */
async function tracedApp(tracer: Tracer, options: Parameters<typeof rateLimit>[1]): Promise<FastifyInstance> {
  const app = Fastify({
    serverFactory: (handler) =>
      createServer((req, res) => {
        tracer.startActiveSpan(`${req.method} ${req.url}`, (span) => {
          res.on('close', () => span.end());
          handler(req, res);
        });
      }),
  });
  await app.register(rateLimit, options);
  app.get('/', async () => ({ ok: true }));
  await app.listen({ host: IP, port: 0 });
  return app;
}

function urlOf(app: FastifyInstance): string {
  return `http://${IP}:${(app.server.address() as AddressInfo).port}/`;
}

/** The finished spans, once `count` have ended (a span ends as its response closes, after the client has it). */
async function finished(exporter: InMemorySpanExporter, count: number): Promise<ReadableSpan[]> {
  for (let waited = 0; exporter.getFinishedSpans().length < count && waited < 5000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return exporter.getFinishedSpans();
}

async function get(url: string): Promise<number> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.status;
}

function pointValue(points: DataPoint<unknown>[], attributes: Record<string, string>): unknown {
  return points.find((point) => JSON.stringify(point.attributes) === JSON.stringify(attributes))?.value;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('openTelemetryObserver through a Fastify app', () => {
  test('each request span gets the decision; a denial adds an event; counters and histograms by rule and outcome', async () => {
    const otel = telemetry();
    app = await tracedApp(otel.tracer, { rules, observer: openTelemetryObserver({ meter: otel.meter }) });
    expect([await get(urlOf(app)), await get(urlOf(app)), await get(urlOf(app))]).toEqual([200, 200, 429]);

    const spans = await finished(otel.spans, 3);
    expect(spans.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'sluice.rule': 'per_ip',
        'sluice.outcome': 'allowed',
        'sluice.remaining': 1,
      }),
      expect.objectContaining({
        'sluice.rule': 'per_ip',
        'sluice.outcome': 'allowed',
        'sluice.remaining': 0,
      }),
      expect.objectContaining({
        'sluice.rule': 'per_ip',
        'sluice.outcome': 'denied',
        'sluice.remaining': 0,
        'sluice.failed_open': false,
        'sluice.limit': 2,
      }),
    ]);
    expect(spans.map((span) => span.events.map((event) => event.name))).toEqual([[], [], [DENIED_EVENT]]);
    const denial = spans[2]?.events[0]?.attributes ?? {};
    expect(denial['sluice.rule']).toBe('per_ip');
    expect(denial['sluice.retry_after_ms']).toBeGreaterThan(0);

    const decisions = await otel.points('sluice_decisions_total');
    expect(pointValue(decisions, { rule: 'per_ip', mode: 'enforce', outcome: 'allowed' })).toBe(2);
    expect(pointValue(decisions, { rule: 'per_ip', mode: 'enforce', outcome: 'denied' })).toBe(1);
    const retryAfter = await otel.points('sluice_retry_after_seconds');
    expect((pointValue(retryAfter, { rule: 'per_ip' }) as Histogram | undefined)?.count).toBe(1);
    const rulesInfo = await otel.points('sluice_rules_info');
    expect(rulesInfo).toHaveLength(1);
    expect(rulesInfo[0]?.value).toBe(1);
    expect(await otel.points('sluice_rules_reloads_total')).toMatchObject([
      { attributes: { result: 'ok' }, value: 1 },
    ]);

    // No client address anywhere: not on a span, not in a label.
    const everything = JSON.stringify([spans.map((s) => [s.attributes, s.events]), decisions, retryAfter]);
    expect(everything).not.toContain(IP);
    await otel.close();
  });

  test('a RedisStore: store latency is recorded; with its server stopped, the span says failed open', async () => {
    const otel = telemetry();
    const server = await startRedis();
    const redis = new Redis({ ...recommendedRedisOptions, host: IP, port: server.port });
    redis.on('error', () => {});
    await ready(redis);
    const store: Store = new RedisStore({ client: redis, prefix: randomPrefix('otel'), timeoutMs: 200 });
    try {
      app = await tracedApp(otel.tracer, {
        rules,
        store,
        observer: openTelemetryObserver({ meter: otel.meter }),
      });
      expect(await get(urlOf(app))).toBe(200);
      const latency = await otel.points('sluice_store_duration_seconds');
      expect((latency[0]?.value as Histogram | undefined)?.count).toBeGreaterThanOrEqual(1);

      await server.stop();
      expect(await get(urlOf(app))).toBe(200); // on_store_error defaults to allow
      const spans = await finished(otel.spans, 2);
      expect(spans[1]?.attributes).toMatchObject({
        'sluice.outcome': 'failed_open',
        'sluice.failed_open': true,
      });
      expect(spans[1]?.events).toEqual([]);
      const decisions = await otel.points('sluice_decisions_total');
      expect(pointValue(decisions, { rule: 'per_ip', mode: 'enforce', outcome: 'failed_open' })).toBe(1);
      const errors = await otel.points('sluice_store_errors_total');
      expect(errors.reduce((sum, point) => sum + (point.value as number), 0)).toBeGreaterThan(0);
    } finally {
      await app?.close();
      app = undefined;
      redis.disconnect();
      await server.stop();
      await otel.close();
    }
  }, 60_000);

  test('spans: false leaves the span alone and still counts', async () => {
    const otel = telemetry();
    app = await tracedApp(otel.tracer, {
      rules,
      observer: openTelemetryObserver({ meter: otel.meter, spans: false }),
    });
    expect(await get(urlOf(app))).toBe(200);
    const [span] = await finished(otel.spans, 1);
    expect(Object.keys(span?.attributes ?? {}).filter((name) => name.startsWith('sluice.'))).toEqual([]);
    const decisions = await otel.points('sluice_decisions_total');
    expect(pointValue(decisions, { rule: 'per_ip', mode: 'enforce', outcome: 'allowed' })).toBe(1);
    await otel.close();
  });
});

describe('openTelemetryObserver options', () => {
  test('an unknown option is refused with a did-you-mean', () => {
    expect(() => openTelemetryObserver({ span: false } as never)).toThrow(ConfigError);
    expect(() => openTelemetryObserver({ span: false } as never)).toThrow(/did you mean "spans"/);
  });

  test('metric names follow the prefix', () => {
    expect(metricNames('app_')).toContain('app_decisions_total');
    expect(metricNames()).toContain('sluice_store_duration_seconds');
  });
});

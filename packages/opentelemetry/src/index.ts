import {
  type Attributes,
  type Meter,
  metrics,
  type ObservableResult,
  type Span,
  trace,
} from '@opentelemetry/api';
import {
  type CompiledRules,
  checkOptionNames,
  type Decision,
  type Observer,
  type RegionEvent,
  type RuleResult,
  type StoreErrorKind,
} from '@sluice/core';

/** Options of {@link openTelemetryObserver}. */
export interface OpenTelemetryObserverOptions {
  /** Meter to record on; by default the global MeterProvider's meter named `@sluice/opentelemetry`. */
  meter?: Meter;
  /** Prefix of every metric name, as @sluice/prometheus's; default `sluice_`. */
  prefix?: string;
  /** Put each decision on the active span (attributes, and an event on denial); default true. */
  spans?: boolean;
}

/** What a rule (or, on a span, the whole decision) did for one request. */
export type DecisionOutcome = 'allowed' | 'denied' | 'shadow_denied' | 'failed_open';

/** The `rule` attribute of a request that no rule matched, as in @sluice/prometheus. */
export const NO_RULE = '(none)';

/** Name of the span event added when a request is denied. */
export const DENIED_EVENT = 'sluice.rate_limited';

/** Span attribute names; every value comes from the rules or the decision, never the client's key or address. */
export const SPAN_ATTRIBUTES = {
  rule: 'sluice.rule',
  outcome: 'sluice.outcome',
  remaining: 'sluice.remaining',
  limit: 'sluice.limit',
  failedOpen: 'sluice.failed_open',
  reason: 'sluice.reason',
  retryAfterMs: 'sluice.retry_after_ms',
  rulesVersion: 'sluice.rules_version',
} as const;

const OPTION_NAMES = ['meter', 'prefix', 'spans'] as const;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const RETRY_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 86_400];

// The metrics of @sluice/prometheus that an observer can record from its hooks, by the same names and labels.
// The ones it reads from stores and limiters at scrape time are Prometheus-only (see README).
const METRICS = {
  decisions: { name: 'decisions_total', description: 'Rule evaluations by rule, effective mode and outcome' },
  storeErrors: { name: 'store_errors_total', description: 'Failed store calls by kind' },
  storeDuration: { name: 'store_duration_seconds', description: 'Duration of calls to the remote store' },
  retryAfter: { name: 'retry_after_seconds', description: 'Retry-After given to denied requests, by rule' },
  concurrency: { name: 'concurrency_active', description: 'Concurrency leases held, by rule' },
  rulesInfo: { name: 'rules_info', description: 'The rules version in force in this process (1), by domain' },
  reloads: { name: 'rules_reloads_total', description: 'Rule tables loaded (ok) or rejected (error)' },
  adaptiveFactor: {
    name: 'adaptive_factor',
    description: "The factor an adaptive rule's limit is scaled by",
  },
  sheds: { name: 'shed_total', description: 'Requests denied by a rule under pressure, by rule and class' },
  bans: { name: 'bans_total', description: 'Keys banned by an enforcing rule with ban, by rule' },
  regionRounds: {
    name: 'region_round_seconds',
    description: "Duration of a gateway's calls to the global store, by region and result (ok, error)",
  },
  regionUnits: {
    name: 'region_units_total',
    description:
      'Units of global budgets granted to the region (slice) or charged after (charge), by region and rule',
  },
  regionPartitioned: {
    name: 'region_partitioned',
    description:
      'Whether the region decides its global rules on its fallback share (1) or not (0), by region',
  },
} as const;

/** The metric names an observer with this prefix records. */
export function metricNames(prefix = 'sluice_'): string[] {
  return Object.values(METRICS).map((spec) => prefix + spec.name);
}

/** The outcome of one evaluated rule. */
export function ruleOutcome(result: RuleResult): DecisionOutcome {
  if (result.failed && result.allowed) return 'failed_open';
  if (result.shadowDenied) return 'shadow_denied';
  return result.allowed ? 'allowed' : 'denied';
}

/** The outcome of a whole decision: a denial first, then failing open, then a shadow rule's would-be denial. */
export function decisionOutcome(decision: Decision): DecisionOutcome {
  if (!decision.allowed) return 'denied';
  if (decision.failedOpen) return 'failed_open';
  return decision.results.some((result) => result.shadowDenied) ? 'shadow_denied' : 'allowed';
}

/** The decision as span attributes. */
export function spanAttributes(decision: Decision): Attributes {
  const attributes: Attributes = {
    [SPAN_ATTRIBUTES.rule]: decision.rule ?? NO_RULE,
    [SPAN_ATTRIBUTES.outcome]: decisionOutcome(decision),
    [SPAN_ATTRIBUTES.failedOpen]: decision.failedOpen,
    [SPAN_ATTRIBUTES.reason]: decision.reason,
    [SPAN_ATTRIBUTES.rulesVersion]: decision.version,
  };
  // A request no rule counted has no limit: Infinity is no attribute value an exporter can carry.
  if (Number.isFinite(decision.remaining)) attributes[SPAN_ATTRIBUTES.remaining] = decision.remaining;
  if (Number.isFinite(decision.limit)) attributes[SPAN_ATTRIBUTES.limit] = decision.limit;
  return attributes;
}

/** Puts the decision on `span`, with an event when it is a denial. */
function annotate(span: Span, decision: Decision): void {
  if (!span.isRecording()) return;
  span.setAttributes(spanAttributes(decision));
  if (decision.allowed) return;
  const event: Attributes = {
    [SPAN_ATTRIBUTES.rule]: decision.rule ?? NO_RULE,
    [SPAN_ATTRIBUTES.reason]: decision.reason,
  };
  if (Number.isFinite(decision.retryAfterMs)) event[SPAN_ATTRIBUTES.retryAfterMs] = decision.retryAfterMs;
  span.addEvent(DENIED_EVENT, event);
}

/** The instruments, made once on `meter`; the names and label sets are @sluice/prometheus's. */
function instruments(meter: Meter, prefix: string) {
  const named = (spec: { name: string }) => prefix + spec.name;
  return {
    decisions: meter.createCounter(named(METRICS.decisions), about(METRICS.decisions)),
    storeErrors: meter.createCounter(named(METRICS.storeErrors), about(METRICS.storeErrors)),
    storeDuration: meter.createHistogram(named(METRICS.storeDuration), {
      ...about(METRICS.storeDuration),
      unit: 's',
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    }),
    retryAfter: meter.createHistogram(named(METRICS.retryAfter), {
      ...about(METRICS.retryAfter),
      unit: 's',
      advice: { explicitBucketBoundaries: RETRY_BUCKETS },
    }),
    concurrency: meter.createUpDownCounter(named(METRICS.concurrency), about(METRICS.concurrency)),
    reloads: meter.createCounter(named(METRICS.reloads), about(METRICS.reloads)),
    adaptiveFactor: meter.createGauge(named(METRICS.adaptiveFactor), about(METRICS.adaptiveFactor)),
    sheds: meter.createCounter(named(METRICS.sheds), about(METRICS.sheds)),
    bans: meter.createCounter(named(METRICS.bans), about(METRICS.bans)),
    regionRounds: meter.createHistogram(named(METRICS.regionRounds), {
      ...about(METRICS.regionRounds),
      unit: 's',
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    }),
    regionUnits: meter.createCounter(named(METRICS.regionUnits), about(METRICS.regionUnits)),
    regionPartitioned: meter.createGauge(named(METRICS.regionPartitioned), about(METRICS.regionPartitioned)),
    rulesInfo: meter.createObservableGauge(named(METRICS.rulesInfo), about(METRICS.rulesInfo)),
  };
}

function about(spec: { description: string }): { description: string } {
  return { description: spec.description };
}

/**
 * Creates an Observer that records Sluice's decisions on an OpenTelemetry meter and puts each one on the active
 * span. Pass it as `observer` to createLimiter or an adapter (with others through `combineObservers`).
 */
export function openTelemetryObserver(options: OpenTelemetryObserverOptions = {}): Observer {
  checkOptionNames('openTelemetryObserver', options, OPTION_NAMES);
  const meter = options.meter ?? metrics.getMeter('@sluice/opentelemetry');
  const spans = options.spans ?? true;
  const recorded = instruments(meter, options.prefix ?? 'sluice_');
  const versions = new Map<string, string>(); // domain -> version in force
  // Observed, so that only the version in force has a point (a synchronous gauge would keep the old one).
  recorded.rulesInfo.addCallback((result: ObservableResult) => {
    for (const [domain, version] of versions) result.observe(1, { domain, version });
  });

  function count(decision: Decision): void {
    if (decision.results.length === 0) {
      recorded.decisions.add(1, { rule: NO_RULE, mode: 'enforce', outcome: 'allowed' });
      return;
    }
    for (const result of decision.results) {
      recorded.decisions.add(1, { rule: result.rule, mode: result.mode, outcome: ruleOutcome(result) });
    }
    if (!decision.allowed && decision.rule !== undefined && Number.isFinite(decision.retryAfterMs)) {
      recorded.retryAfter.record(decision.retryAfterMs / 1000, { rule: decision.rule });
    }
  }

  // One parameter: the adapters then build only the descriptors the rules read (this observer reads none).
  function onDecision(decision: Decision): void {
    count(decision);
    if (!spans) return;
    const span = trace.getActiveSpan();
    if (span !== undefined) annotate(span, decision);
  }

  function onRegion(event: RegionEvent): void {
    const { region } = event;
    if (event.kind === 'round')
      recorded.regionRounds.record(event.seconds, { region, result: event.ok ? 'ok' : 'error' });
    else if (event.kind === 'slice' || event.kind === 'charge')
      recorded.regionUnits.add(event.units, { region, rule: event.rule, kind: event.kind });
    else recorded.regionPartitioned.record(event.kind === 'unreachable' ? 1 : 0, { region });
  }

  function onRulesLoaded(rules: CompiledRules): void {
    versions.set(rules.domain, rules.version);
    recorded.reloads.add(1, { result: 'ok' });
  }

  return {
    onDecision,
    onStoreError: (kind: StoreErrorKind) => recorded.storeErrors.add(1, { kind }),
    onStoreLatency: (seconds) => recorded.storeDuration.record(seconds),
    onRulesLoaded,
    onRulesError: () => recorded.reloads.add(1, { result: 'error' }),
    onLeases: (rule, delta) => recorded.concurrency.add(delta, { rule }),
    onAdaptiveFactor: (rule, factor) => recorded.adaptiveFactor.record(factor, { rule }),
    onShed: (rule, priority) => recorded.sheds.add(1, { rule, priority }),
    onBan: (rule) => recorded.bans.add(1, { rule }),
    onRegion,
  };
}

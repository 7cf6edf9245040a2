import {
  type CompiledRules,
  ConfigError,
  checkOptionNames,
  type Decision,
  type LimiterHealth,
  type Observer,
  type RegionEvent,
  type RuleResult,
  type Store,
  type StoreErrorKind,
  type StoreHealth,
  storeHealth,
} from '@sluice/core';
import type { AdapterObserver } from '@sluice/core/http';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Options of {@link prometheusObserver}. */
export interface PrometheusObserverOptions {
  /** Registry to define the metrics on; a fresh one by default (never prom-client's global registry). */
  register?: Registry;
  /** Prefix of every metric name; default `sluice_`. */
  prefix?: string;
  /** Milliseconds since the epoch, to judge review dates at scrape time; default `Date.now`. */
  clock?: () => number;
  /**
   * Stores whose `health()` is read at each scrape, by the name the `store` label gives them:
   * `{redis: redisStore, local: memoryStore}`. Each must have `health()` (RedisStore and MemoryStore do).
   */
  stores?: Readonly<Record<string, Store>>;
  /**
   * Limiters whose `health()` is read at each scrape, by the name the `limiter` label gives them. A limiter
   * made with this observer is made after it: add that one with `observer.watch(name, limiter)`.
   */
  limiters?: Readonly<Record<string, HealthReporter>>;
}

/** Every option {@link prometheusObserver} reads: any other name is a misspelling, refused with a did-you-mean. */
const OPTION_NAMES: readonly (keyof PrometheusObserverOptions)[] = [
  'register',
  'prefix',
  'clock',
  'stores',
  'limiters',
];

/** What the observer reads of a limiter: its `health()` (every Sluice limiter has one). */
export interface HealthReporter {
  health(): LimiterHealth;
}

/** An Observer that records Sluice metrics, with the registry that holds them (serve it on /metrics). */
export interface PrometheusObserver extends Observer, Pick<AdapterObserver, 'onStage'> {
  readonly register: Registry;
  /** The metrics in the Prometheus text format: `register.metrics()`. */
  metrics(): Promise<string>;
  /** Reads this limiter's `health()` at each scrape, under the `limiter` label `name`. */
  watch(name: string, limiter: HealthReporter): void;
}

/** What a rule did for one request, as the `outcome` label says it. */
export type DecisionOutcome = 'allowed' | 'denied' | 'shadow_denied' | 'failed_open';

/** Label value of `rule` for a request that no rule matched. */
export const NO_RULE = '(none)';

/** Label sets and values of one metric for one store's health. */
type Series = readonly (readonly [labels: Readonly<Record<string, string>>, value: number])[];

/** One series without labels beyond `store`; none when the store does not report the value. */
const one = (value: number | undefined): Series => (value === undefined ? [] : [[{}, value]]);

const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const RETRY_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 86_400];

// Every metric in one place. Labels are rule names, modes, outcomes, kinds, domains and versions: all come from
// the rules file or the code, never from a request, so no key, IP or API key can reach a label.
const METRICS = {
  decisions: {
    kind: 'counter',
    name: 'decisions_total',
    help: 'Rule evaluations by rule, effective mode (rollout applied) and outcome',
    labelNames: ['rule', 'mode', 'outcome'],
  },
  storeErrors: {
    kind: 'counter',
    name: 'store_errors_total',
    help: 'Failed store calls by kind (timeout, error, breaker_open)',
    labelNames: ['kind'],
  },
  storeDuration: {
    kind: 'histogram',
    name: 'store_duration_seconds',
    help: 'Duration of calls to the remote counter store',
    labelNames: [],
    buckets: LATENCY_BUCKETS,
  },
  retryAfter: {
    kind: 'histogram',
    name: 'retry_after_seconds',
    help: 'Retry-After given to denied requests, by denying rule',
    labelNames: ['rule'],
    buckets: RETRY_BUCKETS,
  },
  concurrency: {
    kind: 'gauge',
    name: 'concurrency_active',
    help: 'Concurrency leases held by requests in progress, by rule',
    labelNames: ['rule'],
  },
  held: {
    kind: 'gauge',
    name: 'connections_held',
    help: 'Leases held by open connections (streams, WebSockets) and renewed while they live, by rule',
    labelNames: ['rule'],
  },
  rulesInfo: {
    kind: 'gauge',
    name: 'rules_info',
    help: 'The rules version in force in this process (1), by domain',
    labelNames: ['domain', 'version'],
  },
  reloads: {
    kind: 'counter',
    name: 'rules_reloads_total',
    help: 'Rule tables loaded (ok) or rejected (error), including the first load',
    labelNames: ['result'],
  },
  reviewOverdue: {
    kind: 'gauge',
    name: 'rule_review_overdue',
    help: 'Rules whose review date has passed (1) or not (0); only rules with a review date',
    labelNames: ['rule'],
  },
  storeConnected: {
    kind: 'gauge',
    name: 'store_connected',
    help: 'Whether the store can be reached (1) or not (0: connection down, breaker open), read at scrape time',
    labelNames: ['store'],
    read: (health: StoreHealth) => one(health.connected ? 1 : 0),
  },
  storeBreaker: {
    kind: 'gauge',
    name: 'store_breaker_state',
    help: 'The breaker state of the store (1) among closed, open and half_open (0), read at scrape time',
    labelNames: ['store', 'state'],
    read: (health: StoreHealth): Series =>
      BREAKER_STATES.map((state) => [{ state }, health.breaker === state ? 1 : 0]),
  },
  storePending: {
    kind: 'gauge',
    name: 'store_pending_calls',
    help: 'Store calls sent and not yet settled, read at scrape time',
    labelNames: ['store'],
    read: (health: StoreHealth) => one(health.pending),
  },
  storeFailingOpen: {
    kind: 'gauge',
    name: 'store_failing_open_since_seconds',
    help: 'Unix time since which store calls have been failing open (or answered by the fallback); 0 while healthy',
    labelNames: ['store'],
    read: (health: StoreHealth) => one((health.failingOpenSince ?? 0) / 1000),
  },
  storeKeys: {
    kind: 'gauge',
    name: 'store_keys',
    help: 'Keys the store holds, for stores that count them (MemoryStore), read at scrape time',
    labelNames: ['store'],
    read: (health: StoreHealth) => one(health.keys),
  },
  storeEvictions: {
    kind: 'counter',
    name: 'store_evictions_total',
    help: 'Keys evicted to keep the store within its bound (MemoryStore maxKeys), read at scrape time',
    labelNames: ['store'],
    read: (health: StoreHealth) => one(health.evictions),
  },
  adaptiveFactor: {
    kind: 'gauge',
    name: 'adaptive_factor',
    help: "The factor an adaptive rule's limit is scaled by (1: full limit, down to its floor), by rule",
    labelNames: ['rule'],
  },
  sheds: {
    kind: 'counter',
    name: 'shed_total',
    help: 'Requests denied by a rule under pressure (adaptive factor below 1, or a priority share), by rule and class',
    labelNames: ['rule', 'priority'],
  },
  bans: {
    kind: 'counter',
    name: 'bans_total',
    help: 'Keys banned by an enforcing rule with ban (each ban counted once, when it starts), by rule',
    labelNames: ['rule'],
  },
  regionRounds: {
    kind: 'histogram',
    name: 'region_round_seconds',
    help: "Duration of a gateway's calls to the global store for scope: global rules, by region and result (ok, error)",
    labelNames: ['region', 'result'],
    buckets: LATENCY_BUCKETS,
  },
  regionUnits: {
    kind: 'counter',
    name: 'region_units_total',
    help: 'Units of global budgets granted to the region (slice) or admitted beyond its grant and charged after (charge), by region and rule',
    labelNames: ['region', 'rule', 'kind'],
  },
  regionPartitioned: {
    kind: 'gauge',
    name: 'region_partitioned',
    help: 'Whether the region decides its global rules on its fallback share, the global store unreachable (1) or not (0), by region',
    labelNames: ['region'],
  },
  stages: {
    kind: 'counter',
    name: 'stages_total',
    help: 'Responses of rules with warn_at or challenge by escalation stage (warn, limit, challenge, ban; solved, refused with a reason), by rule',
    labelNames: ['rule', 'stage', 'reason'],
  },
  observerFailures: {
    kind: 'counter',
    name: 'observer_failures_total',
    help: 'Observer hook calls that threw or rejected (swallowed, never thrown into a request), read at scrape time',
    labelNames: ['limiter'],
    readLimiter: (health: LimiterHealth) => health.observerFailures,
  },
} as const;

type MetricSpec = (typeof METRICS)[keyof typeof METRICS];

/** The metric names an observer with this prefix defines, for dashboards and alert checks. */
export function metricNames(prefix = 'sluice_'): string[] {
  return Object.values(METRICS).map((spec) => prefix + spec.name);
}

/** The stores given, checked: each must have a `health()` to read. */
function withHealth(stores: Readonly<Record<string, Store>> | undefined): [string, Store][] {
  const entries = Object.entries(stores ?? {});
  for (const [name, store] of entries) {
    if (name === '') throw new ConfigError('stores: a store needs a name (the value of its `store` label)');
    if (typeof store?.health !== 'function') {
      throw new ConfigError(`stores.${name} has no health() method: pass a store that reports its health`);
    }
  }
  return entries;
}

/** A limiter to watch, checked: it must have a `health()` to read. */
function checkedLimiter(name: string, limiter: HealthReporter): HealthReporter {
  if (name === '')
    throw new ConfigError('limiters: a limiter needs a name (the value of its `limiter` label)');
  if (typeof limiter?.health !== 'function') {
    throw new ConfigError(`limiters.${name} has no health() method: pass a limiter made by createLimiter`);
  }
  return limiter;
}

/** The outcome of one evaluated rule. */
export function outcomeOf(result: RuleResult): DecisionOutcome {
  if (result.failed && result.allowed) return 'failed_open';
  if (result.shadowDenied) return 'shadow_denied';
  return result.allowed ? 'allowed' : 'denied';
}

/**
 * Creates an Observer recording Sluice metrics on prom-client. Pass it as `observer` to createLimiter or an
 * adapter, and serve `observer.register` on /metrics.
 */
export function prometheusObserver(options: PrometheusObserverOptions = {}): PrometheusObserver {
  checkOptionNames('prometheusObserver', options, OPTION_NAMES);
  const register = options.register ?? new Registry();
  const prefix = options.prefix ?? 'sluice_';
  const clock = options.clock ?? Date.now;
  const stores = withHealth(options.stores);
  const limiters = new Map<string, HealthReporter>();
  const watch = (name: string, limiter: HealthReporter): void => {
    limiters.set(name, checkedLimiter(name, limiter));
  };
  for (const [name, limiter] of Object.entries(options.limiters ?? {})) watch(name, limiter);
  const define = <S extends MetricSpec>(spec: S, collect?: () => void) => {
    const config = {
      name: prefix + spec.name,
      help: spec.help,
      labelNames: [...spec.labelNames],
      registers: [register],
      ...('buckets' in spec ? { buckets: [...spec.buckets] } : {}),
      ...(collect ? { collect } : {}),
    };
    if (spec.kind === 'counter') return new Counter(config);
    if (spec.kind === 'histogram') return new Histogram(config);
    return new Gauge(config);
  };

  const reviews = new Map<string, ReadonlyMap<string, string>>(); // domain -> rule -> review date
  const versions = new Map<string, string>(); // domain -> version in force
  const decisions = define(METRICS.decisions) as Counter;
  const storeErrors = define(METRICS.storeErrors) as Counter;
  const storeDuration = define(METRICS.storeDuration) as Histogram;
  const retryAfter = define(METRICS.retryAfter) as Histogram;
  const concurrency = define(METRICS.concurrency) as Gauge;
  const held = define(METRICS.held) as Gauge;
  const rulesInfo = define(METRICS.rulesInfo) as Gauge;
  const reloads = define(METRICS.reloads) as Counter;
  const adaptiveFactor = define(METRICS.adaptiveFactor) as Gauge;
  const sheds = define(METRICS.sheds) as Counter;
  const bans = define(METRICS.bans) as Counter;
  const stages = define(METRICS.stages) as Counter;
  const regionRounds = define(METRICS.regionRounds) as Histogram;
  const regionUnits = define(METRICS.regionUnits) as Counter;
  const regionPartitioned = define(METRICS.regionPartitioned) as Gauge;
  function onRegion(event: RegionEvent): void {
    const { region } = event;
    if (event.kind === 'round')
      regionRounds.observe({ region, result: event.ok ? 'ok' : 'error' }, event.seconds);
    else if (event.kind === 'slice' || event.kind === 'charge')
      regionUnits.inc({ region, rule: event.rule, kind: event.kind }, event.units);
    else regionPartitioned.set({ region }, event.kind === 'unreachable' ? 1 : 0);
  }
  const reviewOverdue = define(METRICS.reviewOverdue, () => {
    // Judged at scrape time, so a review date passing shows up without a reload.
    const today = new Date(clock()).toISOString().slice(0, 10);
    reviewOverdue.reset();
    for (const table of reviews.values()) {
      for (const [rule, review] of table) reviewOverdue.set({ rule }, review < today ? 1 : 0);
    }
  }) as Gauge;

  const observerFailures = define(METRICS.observerFailures, () => {
    observerFailures.reset();
    for (const [limiter, reporter] of limiters) {
      observerFailures.inc({ limiter }, METRICS.observerFailures.readLimiter(reporter.health()));
    }
  }) as Counter;

  for (const spec of Object.values(METRICS)) {
    if (!('read' in spec)) continue;
    // Read at scrape time; a counter is set to the store's own running total the same way as a gauge.
    const metric: Gauge | Counter = define(spec, () => {
      metric.reset();
      for (const [name, store] of stores) {
        // A health() that throws reads as unreachable, as limiter.health() reports it.
        const health = storeHealth(store) as StoreHealth;
        for (const [labels, value] of spec.read(health)) metric.inc({ store: name, ...labels }, value);
      }
    }) as Gauge | Counter;
  }

  function onDecision(decision: Decision): void {
    if (decision.results.length === 0) {
      decisions.inc({ rule: NO_RULE, mode: 'enforce', outcome: 'allowed' });
      return;
    }
    for (const result of decision.results) {
      decisions.inc({ rule: result.rule, mode: result.mode, outcome: outcomeOf(result) });
    }
    if (!decision.allowed && decision.rule !== undefined && Number.isFinite(decision.retryAfterMs)) {
      retryAfter.observe({ rule: decision.rule }, decision.retryAfterMs / 1000);
    }
  }

  function onRulesLoaded(rules: CompiledRules): void {
    const previous = versions.get(rules.domain);
    if (previous !== undefined && previous !== rules.version) {
      rulesInfo.remove({ domain: rules.domain, version: previous });
    }
    versions.set(rules.domain, rules.version);
    rulesInfo.set({ domain: rules.domain, version: rules.version }, 1);
    reloads.inc({ result: 'ok' });
    reviews.set(
      rules.domain,
      new Map(rules.rules.flatMap((rule) => (rule.review === undefined ? [] : [[rule.name, rule.review]]))),
    );
  }

  return {
    register,
    metrics: () => register.metrics(),
    watch,
    onDecision,
    onStoreError: (kind: StoreErrorKind) => storeErrors.inc({ kind }),
    onStoreLatency: (seconds) => storeDuration.observe(seconds),
    onRulesLoaded,
    onRulesError: () => reloads.inc({ result: 'error' }),
    onLeases: (rule, delta) => concurrency.inc({ rule }, delta),
    onHeld: (rule, delta) => held.inc({ rule }, delta),
    onAdaptiveFactor: (rule, factor) => adaptiveFactor.set({ rule }, factor),
    onShed: (rule, priority) => sheds.inc({ rule, priority }),
    onBan: (rule) => bans.inc({ rule }),
    onRegion,
    onStage: (stage, rule, reason) =>
      stages.inc(reason === undefined ? { rule, stage } : { rule, stage, reason }),
  };
}

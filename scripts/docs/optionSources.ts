/**
 * The option objects the options reference documents: which exported interface of which entry point, under
 * which heading. The TSDoc on each interface member is the page's text (scripts/docs/options.ts), so an option
 * is documented where it is declared. test/docs/generated.test.ts checks the page against the names the code
 * itself accepts (the lists each constructor hands to checkOptionNames, the adapters' zod schema).
 */
export interface OptionSource {
  /** Section heading: the call that takes the options. */
  readonly title: string;
  /**
   * The import specifier the interface is exported from; or, for an interface the entry does not export (an
   * options object a function takes in place), the source file that declares it, from the repository root.
   */
  readonly entry: string;
  readonly interface: string;
  /**
   * Only the members declared on this interface itself (an adapter's own options beside the shared ones).
   */
  readonly ownOnly?: boolean;
}

export const OPTION_SOURCES: readonly OptionSource[] = [
  { title: 'createLimiter', entry: '@sluice/core', interface: 'LimiterOptions' },
  {
    title: 'Adapters (Fastify, Express, Koa, Hono, NestJS, WebSocket)',
    entry: '@sluice/core/http',
    interface: 'RateLimitOptions',
  },
  { title: '@sluice/fastify', entry: '@sluice/fastify', interface: 'FastifyRateLimitOptions', ownOnly: true },
  { title: '@sluice/express', entry: '@sluice/express', interface: 'ExpressRateLimitOptions', ownOnly: true },
  { title: '@sluice/koa', entry: '@sluice/koa', interface: 'KoaRateLimitOptions', ownOnly: true },
  { title: '@sluice/hono', entry: '@sluice/hono', interface: 'HonoRateLimitOptions', ownOnly: true },
  { title: 'websocketLimit', entry: '@sluice/websocket', interface: 'WebSocketLimitOptions', ownOnly: true },
  { title: 'websocketLimit messages', entry: '@sluice/websocket', interface: 'MessageOptions' },
  { title: 'challenge', entry: '@sluice/core/http', interface: 'ChallengeOptions' },
  { title: 'MemoryStore', entry: '@sluice/core', interface: 'MemoryStoreOptions' },
  { title: 'resilientStore', entry: '@sluice/core', interface: 'ResilienceOptions' },
  { title: 'breaker', entry: '@sluice/core', interface: 'BreakerOptions' },
  { title: 'regions', entry: '@sluice/core', interface: 'RegionsOptions' },
  { title: 'watch', entry: '@sluice/core', interface: 'WatchOptions' },
  {
    title: 'PendingCalls (store authors)',
    entry: 'packages/core/src/resilience/pending.ts',
    interface: 'PendingCallsOptions',
  },
  { title: 'RedisStore', entry: '@sluice/redis', interface: 'RedisStoreOptions' },
  { title: 'PostgresStore', entry: '@sluice/postgres', interface: 'PostgresStoreOptions' },
  { title: 'decisionLogObserver', entry: '@sluice/core', interface: 'DecisionLogOptions' },
  { title: 'loadRules, parseRules, resolveRules', entry: '@sluice/core', interface: 'ParseOptions' },
  { title: 'compileRules', entry: '@sluice/core', interface: 'CompileOptions' },
  { title: 'decisionLogObserver sample', entry: '@sluice/core', interface: 'SampleRates' },
  { title: 'watchRules', entry: '@sluice/core', interface: 'WatchRulesOptions' },
  { title: 'fileList', entry: '@sluice/core', interface: 'FileListOptions' },
  { title: 'prometheusObserver', entry: '@sluice/prometheus', interface: 'PrometheusObserverOptions' },
  {
    title: 'openTelemetryObserver',
    entry: '@sluice/opentelemetry',
    interface: 'OpenTelemetryObserverOptions',
  },
  { title: 'geoipDescriptors', entry: '@sluice/geoip', interface: 'GeoipOptions' },
  { title: 'createRateLimitService', entry: '@sluice/envoy', interface: 'RateLimitServiceOptions' },
  { title: 'sluiceFetch (@sluice/client)', entry: '@sluice/client', interface: 'ClientOptions' },
  { title: '@sluice/client backoff', entry: '@sluice/client', interface: 'BackoffOptions' },
  { title: '@sluice/client retryBudget', entry: '@sluice/client', interface: 'RetryBudgetOptions' },
  { title: '@sluice/client events', entry: 'packages/client/src/events.ts', interface: 'ClientEvents' },
  { title: '@sluice/client challenge', entry: '@sluice/client', interface: 'ChallengeOptions' },
];

/** What the bench runs: frameworks, limiters, rule sets, scenarios, and what a server child is told. */

/** The web frameworks under test. */
export type Framework = 'fastify' | 'express' | 'koa';

/**
 * `one`: one rule per API key; `user`: a rules file as users write one (per API key when `auth: api_key`, per IP
 * when anonymous), with the default logger and RateLimit headers; `three`: per key, per tenant and global (peers
 * stack three limiters).
 */
export type RuleSet = 'one' | 'user' | 'three';

/** Who limits: nobody, Sluice on memory or Redis, or the framework's usual peer library. */
export type LimiterKind =
  | 'none'
  | 'sluice-memory'
  | 'sluice-redis'
  | 'sluice-redis-per-request'
  | 'sluice-redis-autopipe'
  | 'peer-memory'
  | 'peer-redis'
  | 'rlflex-redis';

/** How autocannon's requests carry keys (`user`: 10,000 rotating keys, as `rotating`, on the user-style rules). */
export type Scenario = 'hot' | 'rotating' | 'user' | 'three';

/** Every scenario, in report order. */
export const SCENARIOS: readonly Scenario[] = ['hot', 'rotating', 'user', 'three'];

/** Everything a server child needs to build its app. */
export interface ServerSpec {
  readonly framework: Framework;
  readonly limiter: LimiterKind;
  readonly rules: RuleSet;
  /** Port of the bench's private redis-server. */
  readonly redisPort: number;
  /** Key prefix, distinct per server so contenders never share counters. */
  readonly prefix: string;
}

/** Counters a server child reports on request. */
export interface ServerStats {
  readonly decisions: number;
  readonly failedOpen: number;
  readonly denied: number;
  readonly storeErrors: number;
  /** Commands sent to Redis by the server's clients. */
  readonly redisCommands: number;
  /** Requests the server has begun. */
  readonly requests: number;
  /** CPU time the server process has used, user + system, microseconds. */
  readonly cpuMicros: number;
  /**
   * Of which in user space: the JavaScript (the limiter's own code among it), without the kernel's socket work,
   * which moves with the server's pace more than a limiter's code does.
   */
  readonly userMicros: number;
}

/** One autocannon run, as the load child is asked for it. */
export interface LoadJob {
  readonly url: string;
  readonly scenario: Scenario;
  readonly connections: number;
  readonly durationS: number;
  /** Requests per second over all connections; undefined: as fast as the server answers. */
  readonly rate?: number;
}

/** One autocannon run's figures. */
export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  /** Seconds actually run. */
  readonly durationS: number;
  /** CPU time the load generator itself spent in the run, µs (it shares CPU 1 with redis-server). */
  readonly loadCpuMicros: number;
}

/** Far above anything the bench sends in a window: nothing is ever rejected. */
export const NEVER_REACHED = 1_000_000_000;
/** Window of every limit in the bench. */
export const WINDOW_MS = 60_000;
/** Distinct API keys in the rotating and three-rule scenarios. */
export const ROTATING_KEYS = 10_000;
/** Distinct tenants in the three-rule scenario. */
export const TENANTS = 100;

/** How the run's log names a rule set. */
export const RULE_SET_TITLE: Readonly<Record<RuleSet, string>> = {
  one: 'one rule',
  user: 'a user-style rules file',
  three: 'three rules',
};

/** The scenarios a rule set serves. */
export const SCENARIOS_OF: Readonly<Record<RuleSet, readonly Scenario[]>> = {
  one: ['hot', 'rotating'],
  user: ['user'],
  three: ['three'],
};

/** Human names of the limiters, per framework. */
export function contenderName(framework: Framework, limiter: LimiterKind): string {
  const peers: Record<Framework, { memory: string; redis: string }> = {
    fastify: { memory: '@fastify/rate-limit (memory)', redis: '@fastify/rate-limit (Redis)' },
    express: { memory: 'express-rate-limit (memory)', redis: 'express-rate-limit + rate-limit-redis' },
    koa: { memory: 'koa-ratelimit (memory)', redis: 'koa-ratelimit (Redis)' },
  };
  switch (limiter) {
    case 'none':
      return `${framework}, no limiter`;
    case 'sluice-memory':
      return 'Sluice, MemoryStore';
    case 'sluice-redis':
      return 'Sluice, RedisStore';
    case 'sluice-redis-per-request':
      return 'Sluice, RedisStore, one call per request (coalesce: false)';
    case 'sluice-redis-autopipe':
      return 'Sluice, RedisStore, coalesce: false + ioredis auto-pipelining';
    case 'peer-memory':
      return peers[framework].memory;
    case 'peer-redis':
      return peers[framework].redis;
    case 'rlflex-redis':
      return 'rate-limiter-flexible (RateLimiterRedis)';
  }
}

/** Whether a limiter keeps its counters in Redis. */
export function usesRedis(limiter: LimiterKind): boolean {
  return limiter.includes('redis');
}

/** Contenders a `--quick` run leaves out, to stay under two minutes. */
export const FULL_RUN_ONLY: ReadonlySet<LimiterKind> = new Set([
  'sluice-redis-per-request',
  'sluice-redis-autopipe',
  'rlflex-redis',
]);

/** The contenders per framework, the baseline first. */
export const CONTENDERS: Readonly<Record<Framework, readonly LimiterKind[]>> = {
  fastify: [
    'none',
    'sluice-memory',
    'peer-memory',
    'sluice-redis',
    'sluice-redis-per-request',
    'sluice-redis-autopipe',
    'peer-redis',
  ],
  express: [
    'none',
    'sluice-memory',
    'peer-memory',
    'sluice-redis',
    'sluice-redis-per-request',
    'peer-redis',
    'rlflex-redis',
  ],
  koa: ['none', 'sluice-memory', 'peer-memory', 'sluice-redis', 'peer-redis'],
};

/**
 * The limiters bench/capacity-scale.ts drives, without HTTP, on the source's two rules: every request 600 a
 * minute per API key, and requests to /search 5,000 a second in all (one global key). Each gets its own ioredis
 * client (a Redis, or a Cluster of the given ports), set up as its documentation shows, and counts the commands
 * it sends (a script call is one).
 */
import { createRequire } from 'node:module';
import { compileRules, createLimiter, type RulesInput } from '@sluice/core';
import { RedisStore, recommendedRedisOptions, type StateFormat } from '@sluice/redis';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ready } from '../../test/support/redis.js';

/**
 * The contenders: Sluice on its defaults, Sluice with one script call per request, Sluice writing binary states
 * (`stateFormat: 'binary'`), and two peers.
 */
export const CONTENDERS = [
  'sluice',
  'sluice-uncoalesced',
  'sluice-binary',
  'rlflex',
  'fastify-store',
] as const;
export type ContenderName = (typeof CONTENDERS)[number];

/** Where the counters live: one redis-server, or the primaries of a Cluster (loopback ports). */
export interface Target {
  readonly kind: 'single' | 'cluster';
  readonly ports: readonly number[];
}

/** What one request came to. */
export interface Outcome {
  readonly denied: boolean;
  /** Sluice only: a decision that did not reach Redis (the peers report none of theirs). */
  readonly failedOpen: boolean;
  readonly error: boolean;
}

/** A limiter under test in a gateway process. */
export interface Contender {
  /** One request of API key `key`; `search`: a /search request, which the global rule also counts. */
  request(key: number, search: boolean): Promise<Outcome>;
  /** Commands the contender's client sent so far. */
  commandsSent(): number;
  close(): Promise<void>;
}

/** The source's rules, as examples/public-api/rules.yaml writes them (search_global in shadow, a token bucket). */
export const SOURCE_RULES: RulesInput = {
  domain: 'public_api',
  rules: [
    {
      name: 'key_default',
      match: { auth: 'api_key' },
      key: ['api_key'],
      limit: { requests: 600, per: '60s' },
    },
    {
      name: 'search_global',
      match: { route: '/search' },
      key: [],
      global: true,
      limit: { requests: 5000, per: '1s' },
      algorithm: 'token_bucket',
      mode: 'shadow',
    },
  ],
};
const PER_KEY = { points: 600, seconds: 60 };
const SEARCH = { points: 5000, seconds: 1 };

interface Counted {
  readonly client: Redis | Cluster;
  sent(): number;
}

/** A client to the target that counts what it sends. */
async function clientFor(target: Target, options: RedisOptions): Promise<Counted> {
  const nodes = target.ports.map((port) => ({ host: '127.0.0.1', port }));
  const client =
    target.kind === 'single'
      ? new Redis({ ...nodes[0], ...options })
      : new Cluster(nodes, {
          redisOptions: options,
          ...(options.enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
        });
  let sent = 0;
  const send = client.sendCommand.bind(client) as (...args: unknown[]) => unknown;
  (client as { sendCommand: (...args: unknown[]) => unknown }).sendCommand = (...args: unknown[]) => {
    sent += 1;
    return send(...args);
  };
  await ready(client);
  return { client, sent: () => sent };
}

const ALLOWED: Outcome = { denied: false, failedOpen: false, error: false };

/** Sluice's store options the bench may set: every one on its default unless given. */
export interface SluiceOptions {
  /** A fixed time limit per call, ms (`timeoutMs` alone), instead of the default's adaptive one. */
  readonly timeoutMs?: number;
}

async function sluice(
  target: Target,
  prefix: string,
  store: { coalesce: boolean; stateFormat: StateFormat },
  options: SluiceOptions,
): Promise<Contender> {
  const counted = await clientFor(target, recommendedRedisOptions);
  const limiter = createLimiter({
    rules: compileRules(SOURCE_RULES),
    store: new RedisStore({
      client: counted.client,
      prefix,
      ...(store.coalesce ? {} : { coalesce: false }),
      ...(store.stateFormat === 'text' ? {} : { stateFormat: store.stateFormat }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    }),
  });
  return {
    async request(key, search) {
      const decision = await limiter.check({
        auth: 'api_key',
        api_key: `k${key}`,
        route: search ? '/search' : '/items',
      });
      return { denied: !decision.allowed, failedOpen: decision.failedOpen === true, error: false };
    },
    commandsSent: counted.sent,
    async close() {
      await limiter.close();
      counted.client.disconnect();
    },
  };
}

async function rlflex(target: Target, prefix: string): Promise<Contender> {
  const counted = await clientFor(target, {});
  const make = (rule: { points: number; seconds: number }, name: string) =>
    new RateLimiterRedis({
      storeClient: counted.client,
      points: rule.points,
      duration: rule.seconds,
      keyPrefix: `${prefix}-${name}`,
    });
  const perKey = make(PER_KEY, 'key');
  const search = make(SEARCH, 'search');
  return {
    async request(key, onSearch) {
      try {
        await Promise.all([perKey.consume(`k${key}`), onSearch ? search.consume('all') : undefined]);
        return ALLOWED;
      } catch (rejection) {
        // Over a limit it rejects with a RateLimiterRes; anything else is a store error.
        const denied = rejection instanceof RateLimiterRes;
        return { denied, failedOpen: false, error: !denied };
      }
    },
    commandsSent: counted.sent,
    async close() {
      counted.client.disconnect();
    },
  };
}

/** @fastify/rate-limit's Redis store (store/RedisStore.js, CommonJS, untyped): what its plugin calls per request. */
interface FastifyRedisStore {
  incr(
    key: string,
    callback: (error: Error | null, result: { current: number; ttl: number } | null) => void,
    timeWindowMs: number,
    max: number,
  ): void;
}
type FastifyRedisStoreClass = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis | Cluster,
  key: string,
) => FastifyRedisStore;

async function fastifyStore(target: Target, prefix: string): Promise<Contender> {
  const counted = await clientFor(target, {});
  const Store = createRequire(import.meta.url)(
    '@fastify/rate-limit/store/RedisStore.js',
  ) as FastifyRedisStoreClass;
  // The plugin's defaults (continueExceeding and exponentialBackoff off); a namespace per rule, as a route's child has.
  const perKey = new Store(false, false, counted.client, `${prefix}-key-`);
  const search = new Store(false, false, counted.client, `${prefix}-search-`);
  const incr = (store: FastifyRedisStore, key: string, rule: { points: number; seconds: number }) =>
    new Promise<Outcome>((resolve) =>
      store.incr(
        key,
        (error, result) =>
          resolve(
            error || !result
              ? { denied: false, failedOpen: false, error: true }
              : { denied: result.current > rule.points, failedOpen: false, error: false },
          ),
        rule.seconds * 1000,
        rule.points,
      ),
    );
  return {
    async request(key, onSearch) {
      const outcomes = await Promise.all([
        incr(perKey, `k${key}`, PER_KEY),
        ...(onSearch ? [incr(search, 'all', SEARCH)] : []),
      ]);
      return {
        denied: outcomes.some((o) => o.denied),
        failedOpen: false,
        error: outcomes.some((o) => o.error),
      };
    },
    commandsSent: counted.sent,
    async close() {
      counted.client.disconnect();
    },
  };
}

/** A contender on the target, its keys under `prefix`. */
export function makeContender(
  name: ContenderName,
  target: Target,
  prefix: string,
  options: SluiceOptions = {},
): Promise<Contender> {
  switch (name) {
    case 'sluice':
      return sluice(target, prefix, { coalesce: true, stateFormat: 'text' }, options);
    case 'sluice-uncoalesced':
      return sluice(target, prefix, { coalesce: false, stateFormat: 'text' }, options);
    case 'sluice-binary':
      return sluice(target, prefix, { coalesce: true, stateFormat: 'binary' }, options);
    case 'rlflex':
      return rlflex(target, prefix);
    case 'fastify-store':
      return fastifyStore(target, prefix);
  }
}

/** What every bench app shares: Sluice rules and store, the counting observer, the Redis client, the keys. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AlgorithmName, Decision, RateLimitOptions } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import {
  type LimiterKind,
  NEVER_REACHED,
  type RuleSet,
  type ServerSpec,
  type ServerStats,
  WINDOW_MS,
} from '../lib/spec.js';

/** Counts decisions, failed-open decisions, denials and store errors, for the run's validity check. */
export class Tally {
  decisions = 0;
  failedOpen = 0;
  denied = 0;
  storeErrors = 0;
  /** Commands this process sent to Redis (every ioredis client of the app counts through `countCommands`). */
  redisCommands = 0;
  /** Requests the HTTP server has begun (autocannon stops with requests in flight: count them here). */
  requests = 0;

  /** An observer for Sluice adapters. */
  readonly observer = {
    onDecision: (decision: Decision) => {
      this.decisions += 1;
      if (decision.failedOpen) this.failedOpen += 1;
      if (!decision.allowed) this.denied += 1;
    },
    onStoreError: () => {
      this.storeErrors += 1;
    },
  };

  snapshot(): ServerStats {
    const { decisions, failedOpen, denied, storeErrors, redisCommands, requests } = this;
    const cpu = process.cpuUsage();
    return {
      decisions,
      failedOpen,
      denied,
      storeErrors,
      redisCommands,
      requests,
      cpuMicros: cpu.user + cpu.system,
      userMicros: cpu.user,
    };
  }
}

/**
 * The user-style rule set as a service writes it: a YAML file with match conditions, one rule per API key and
 * one per IP for anonymous callers (limits that are never reached, as everywhere in the bench).
 */
/**
 * The algorithm of every Sluice rule: the default (sliding_window) unless BENCH_ALGORITHM names one, e.g.
 * fixed_window, the peers' algorithm, to compare like with like.
 */
const ALGORITHM = process.env.BENCH_ALGORITHM;
const algorithmLine = ALGORITHM === undefined ? '' : `\n    algorithm: ${ALGORITHM}`;
const algorithmField = ALGORITHM === undefined ? {} : { algorithm: ALGORITHM as AlgorithmName };

const USER_RULES_YAML = `domain: bench
rules:
  - name: anon_per_ip
    match: {auth: anonymous}
    key: [ip]
    limit: {requests: ${NEVER_REACHED}, per: ${WINDOW_MS}ms}${algorithmLine}
    owner: team-edge
  - name: key_default
    match: {auth: api_key}
    key: [api_key]
    limit: {requests: ${NEVER_REACHED}, per: ${WINDOW_MS}ms}${algorithmLine}
    owner: team-api
`;

/** Writes the user-style rules file into a fresh temporary directory and returns its path. */
function userRulesFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-bench-')), 'rules.yaml');
  writeFileSync(path, USER_RULES_YAML);
  return path;
}

/** The Sluice rules of a rule set, limits set so that nothing is ever rejected. */
export function sluiceRules(rules: Exclude<RuleSet, 'user'>) {
  const limit = { requests: NEVER_REACHED, per: `${WINDOW_MS}ms` };
  const perKey = { name: 'per_key', key: ['api_key'], limit, ...algorithmField };
  if (rules === 'one') return { domain: 'bench', rules: [perKey] };
  return {
    domain: 'bench',
    rules: [
      perKey,
      { name: 'per_tenant', key: ['tenant'], limit, ...algorithmField },
      { name: 'everyone', global: true, key: [], limit, ...algorithmField },
    ],
  };
}

/**
 * Counts the commands a client sends (each command of a MULTI or a pipeline counts), so that commands run
 * inside scripts, which INFO commandstats also counts, are told apart from round trips.
 */
function countCommands(client: Redis, tally: Tally): Redis {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    tally.redisCommands += 1;
    return send(...args);
  };
  return client;
}

/** A Redis client to the bench's server, as the peers' documentation sets it up. */
export function redisClient(spec: ServerSpec, tally: Tally): Redis {
  return countCommands(new Redis({ host: '127.0.0.1', port: spec.redisPort }), tally);
}

/** The store Sluice uses for this limiter kind. */
function sluiceStore(spec: ServerSpec, tally: Tally): Store | undefined {
  if (spec.limiter === 'sluice-memory') return undefined; // the default MemoryStore
  const client = new Redis({
    host: '127.0.0.1',
    port: spec.redisPort,
    ...recommendedRedisOptions,
    ...(spec.limiter === 'sluice-redis-autopipe' ? { enableAutoPipelining: true } : {}),
  });
  // The default time limit (20 ms, following Redis's observed latency up to 250 ms): issue 24 asks that
  // defaults hold on this saturated machine; what still fails open is counted and marks the run.
  return new RedisStore({
    client: countCommands(client, tally),
    prefix: spec.prefix,
    // The default coalesces a turn's requests into one script call; the other two contenders send one call
    // per request, by themselves or through ioredis auto-pipelining.
    coalesce: spec.limiter === 'sluice-redis',
  });
}

/** The adapter options of Sluice for a spec (tenant from a header in the three-rule set). */
export function sluiceOptions<Req>(
  spec: ServerSpec,
  tally: Tally,
  header: (req: Req, name: string) => string | undefined,
): RateLimitOptions<Req> {
  const store = sluiceStore(spec, tally);
  // The user-style set keeps Sluice's default logger (it only speaks at start-up); the others pass a no-op.
  const user = spec.rules === 'user';
  return {
    rules: user ? userRulesFile() : sluiceRules(spec.rules),
    ...(store ? { store } : {}),
    observer: tally.observer,
    ...(user ? {} : { logger: { warn: () => {} } }),
    ...(spec.rules === 'three' ? { descriptors: (req: Req) => ({ tenant: header(req, 'x-tenant') }) } : {}),
  };
}

/** Whether a limiter kind is Sluice's. */
export function isSluice(limiter: LimiterKind): boolean {
  return limiter.startsWith('sluice');
}

/** One header value as a string ('' when absent, so peers always get a key). */
export function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string {
  const value = headers[name];
  return typeof value === 'string' ? value : (value?.[0] ?? '');
}

/** The limit and window every peer limiter gets. */
export const NEVER_REACHED_WINDOW = { max: NEVER_REACHED, windowMs: WINDOW_MS } as const;

/** The keys each of the peers' stacked limiters counts on, in order: per key, per tenant, global. */
export const PEER_KEYS: readonly ((headers: Record<string, string | string[] | undefined>) => string)[] = [
  (headers) => `k:${headerOf(headers, 'x-api-key')}`,
  (headers) => `t:${headerOf(headers, 'x-tenant')}`,
  () => 'g',
];

/** How many limiter instances a peer stacks for a rule set. */
export function peerLayers(rules: RuleSet): number {
  return rules === 'three' ? 3 : 1;
}

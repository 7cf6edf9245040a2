/**
 * The rate limit service: `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` and
 * `grpc.health.v1.Health` on @grpc/grpc-js, with hand-written codecs (messages.ts).
 */
import * as grpc from '@grpc/grpc-js';
import {
  ConfigError,
  checkOptionNames,
  createLimiter,
  type Decision,
  type Limiter,
  type Observer,
  type RegionsOptions,
  type RulesInput,
  resolveRulesSync,
} from '@sluice/core';
import type { CompiledRules, Store } from '@sluice/core/store';
import {
  costOf,
  type DescriptorSet,
  decideDescriptors,
  descriptorMap,
  isEmptyDescriptor,
  responseOf,
  type ServiceNotice,
  statusOf,
  UNLIMITED_OK,
} from './decide.js';
import type { EnvoyRules } from './envoyConfig.js';
import { healthService } from './health.js';
import {
  CODE,
  DEFAULT_BOUNDS,
  type Decoded,
  type DescriptorStatus,
  decodeRequest,
  encodeResponse,
  type RateLimitRequest,
  type RateLimitResponse,
  type RequestBounds,
} from './messages.js';
import { loadRulesFile, type RulesWatch, watchRulesFile } from './rulesFile.js';

/** Where notices go: `warn` for request-borne ones (each code once, or once per episode), `error` for reloads. */
export interface ServiceLogger {
  warn(message: string): void;
  error?(message: string): void;
}

/** Options of {@link createRateLimitService}. */
export interface RateLimitServiceOptions {
  /** A limiter you built (its rules, store and observer); the service does not close it. */
  readonly limiter?: Limiter;
  /** Or rules: a file path (Sluice or Envoy format, watched and reloaded), a rules object or a compiled table. */
  readonly rules?: string | RulesInput | CompiledRules;
  /** With `rules`: where counters live (RedisStore to share them with the HTTP adapters); default MemoryStore. */
  readonly store?: Store;
  /** With `rules`: metrics and logs, as for HTTP (prometheusObserver). */
  readonly observer?: Observer;
  /** With `rules`: this service's region and the store every region shares (createLimiter's `regions`). */
  readonly regions?: RegionsOptions;
  /** Default 8081; 0 picks a free port. */
  readonly port?: number;
  /** Default `127.0.0.1`; `0.0.0.0` to serve Envoys on other hosts. */
  readonly host?: string;
  /**
   * On a store failure: `rules` (default) answers as each rule's `on_store_error` says (allow: OK, counted as
   * failed open; deny: OVER_LIMIT); `envoy` answers UNAVAILABLE, so Envoy's `failure_mode_deny` decides.
   */
  readonly onStoreError?: 'rules' | 'envoy';
  /** Limits on one request: bytes, descriptors, entries per descriptor (64 KiB, 64, 32). */
  readonly bounds?: Partial<RequestBounds>;
  /** Watch a rules path for changes; default true. */
  readonly watch?: boolean;
  /** How long close() waits for calls in flight before cutting them, ms; default 10000. */
  readonly drainMs?: number;
  readonly logger?: ServiceLogger;
}

/** A running service. */
export interface RateLimitService {
  readonly port: number;
  readonly limiter: Limiter;
  /** Counts since start. */
  stats(): ServiceStats;
  /** Reads a watched rules file now. */
  reload(): Promise<void>;
  /** Stops taking calls, answers those in flight, then closes what it opened. */
  close(): Promise<void>;
}

export interface ServiceStats {
  readonly calls: number;
  readonly overLimit: number;
  readonly invalid: number;
  /** Calls some rule of which the store failed to count (each decided by its on_store_error). */
  readonly storeFailed: number;
  readonly unknownDomain: number;
}

const OPTION_NAMES = [
  'limiter',
  'rules',
  'store',
  'observer',
  'regions',
  'port',
  'host',
  'onStoreError',
  'bounds',
  'watch',
  'drainMs',
  'logger',
];
const SERVICE_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const MAX_DOMAINS_NOTED = 100;

/** Starts the rate limit service; resolves once it listens. */
export async function createRateLimitService(options: RateLimitServiceOptions): Promise<RateLimitService> {
  checkOptionNames('createRateLimitService', options, OPTION_NAMES);
  const logger = options.logger ?? console;
  const state = startRules(options, logger);
  const handler = callHandler(state, options, logger);
  const health = healthService(() => !closing && state.limiter.health().connected);
  let closing = false;
  const server = new grpc.Server();
  server.addService(definition({ ...DEFAULT_BOUNDS, ...options.bounds }), { shouldRateLimit: handler.unary });
  server.addService(health.definition, health.implementation);
  const port = await bind(server, options.host ?? '127.0.0.1', options.port ?? 8081);
  return {
    port,
    limiter: state.limiter,
    stats: () => ({ ...handler.stats }),
    reload: () => state.watch?.reload() ?? Promise.resolve(),
    async close() {
      if (closing) return;
      closing = true;
      health.closing();
      state.watch?.close();
      await drain(server, options.drainMs ?? 10_000);
      if (!options.limiter) await state.limiter.close();
    },
  };
}

interface RulesState {
  readonly limiter: Limiter;
  replaces: EnvoyRules['replaces'];
  watch: RulesWatch | undefined;
}

function startRules(options: RateLimitServiceOptions, logger: ServiceLogger): RulesState {
  if (options.limiter && options.rules !== undefined)
    throw new ConfigError('createRateLimitService: give either limiter or rules, not both');
  if (options.limiter) return { limiter: options.limiter, replaces: new Map(), watch: undefined };
  if (options.rules === undefined)
    throw new ConfigError('createRateLimitService: limiter or rules is required');
  const loaded = typeof options.rules === 'string' ? loadRulesFile(options.rules) : undefined;
  const limiter = createLimiter({
    rules: loaded?.table ?? resolveRulesSync(options.rules as RulesInput | CompiledRules),
    ...(options.store ? { store: options.store } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.regions ? { regions: options.regions } : {}),
    logger,
  });
  const state: RulesState = { limiter, replaces: loaded?.replaces ?? new Map(), watch: undefined };
  if (typeof options.rules !== 'string' || options.watch === false) return state;
  state.watch = watchRulesFile(
    options.rules,
    (next) => {
      limiter.setRules(next.table);
      state.replaces = next.replaces;
    },
    (error) =>
      (logger.error ?? logger.warn).call(
        logger,
        `SLUICE_ENVOY_RULES_REJECTED: ${error.message} (the last good rules stay in force)`,
      ),
  );
  return state;
}

function definition(bounds: RequestBounds): grpc.ServiceDefinition {
  return {
    shouldRateLimit: {
      path: SERVICE_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: () => Buffer.alloc(0),
      requestDeserialize: (buffer: Buffer) => decodeRequest(buffer, bounds),
      responseSerialize: (response: RateLimitResponse) => encodeResponse(response),
      responseDeserialize: () => undefined,
      originalName: 'ShouldRateLimit',
    },
  } as grpc.ServiceDefinition;
}

function callHandler(state: RulesState, options: RateLimitServiceOptions, logger: ServiceLogger) {
  const stats = { calls: 0, overLimit: 0, invalid: 0, storeFailed: 0, unknownDomain: 0 };
  const note = notices(logger);
  const failures = failureEpisodes(logger);
  const fail = (callback: grpc.sendUnaryData<RateLimitResponse>, code: grpc.status, details: string) =>
    callback({ code, details, name: 'RateLimitError', message: details });

  async function answer(request: RateLimitRequest, callback: grpc.sendUnaryData<RateLimitResponse>) {
    const limiter = state.limiter;
    if (request.domain !== limiter.rules.domain) {
      stats.unknownDomain++;
      const domain = request.domain.slice(0, 128);
      note(
        'SLUICE_ENVOY_UNKNOWN_DOMAIN',
        `domain ${JSON.stringify(domain)} has no rules here (served: ${limiter.rules.domain}); answered OK`,
        domain,
      );
      return callback(
        null,
        responseOf(
          request.descriptors.map(() => UNLIMITED_OK),
          [],
        ),
      );
    }
    const { sets, positions } = setsOf(request, note);
    let decisions: Decision[];
    try {
      decisions = await decideDescriptors(limiter, sets, state.replaces);
    } catch (error) {
      stats.invalid++;
      return fail(
        callback,
        grpc.status.INVALID_ARGUMENT,
        error instanceof Error ? error.message : String(error),
      );
    }
    if (failures.seen(decisions)) {
      stats.storeFailed++;
      if (options.onStoreError === 'envoy')
        return fail(callback, grpc.status.UNAVAILABLE, 'the counter store is unavailable');
    }
    const statuses: DescriptorStatus[] = request.descriptors.map(() => UNLIMITED_OK);
    decisions.forEach((decision, n) => {
      statuses[positions[n] as number] = statusOf(decision);
    });
    const response = responseOf(statuses, decisions);
    if (response.overallCode === CODE.OVER_LIMIT) stats.overLimit++;
    callback(null, response);
  }

  const unary: grpc.handleUnaryCall<Decoded, RateLimitResponse> = (call, callback) => {
    stats.calls++;
    const decoded = call.request;
    if ('invalid' in decoded) {
      stats.invalid++;
      note('SLUICE_ENVOY_INVALID_REQUEST', `a request was refused with INVALID_ARGUMENT: ${decoded.invalid}`);
      return fail(callback, grpc.status.INVALID_ARGUMENT, decoded.invalid);
    }
    answer(decoded.request, callback).catch((error: unknown) =>
      fail(callback, grpc.status.INTERNAL, error instanceof Error ? error.message : 'internal error'),
    );
  };
  return { unary, stats };
}

type Note = (code: ServiceNotice, detail: string, domain?: string) => void;

/** Logs each notice code once; unknown domains once each, up to MAX_DOMAINS_NOTED of them. */
function notices(logger: ServiceLogger): Note {
  const noted = new Set<string>();
  let domains = 0;
  return (code, detail, domain) => {
    const once = domain === undefined ? code : `domain:${domain}`;
    if (noted.has(once) || (domain !== undefined && domains >= MAX_DOMAINS_NOTED)) return;
    if (domain !== undefined) domains++;
    noted.add(once);
    logger.warn(`${code}: ${detail}`);
  };
}

/** Tells calls whose store failed, logging one line when an episode of them starts. */
function failureEpisodes(logger: ServiceLogger) {
  let failing = false;
  return {
    seen(decisions: readonly Decision[]): boolean {
      const failed = decisions.some((decision) => decision.results.some((result) => result.failed));
      if (failed && !failing)
        logger.warn('SLUICE_ENVOY_FAILED_OPEN: the store failed; rules answered by their on_store_error');
      failing = failed;
      return failed;
    },
  };
}

/** The request's descriptors the rules can read, as descriptor sets, with their positions in the request. */
function setsOf(request: RateLimitRequest, note: Note): { sets: DescriptorSet[]; positions: number[] } {
  const sets: DescriptorSet[] = [];
  const positions: number[] = [];
  for (const [index, descriptor] of request.descriptors.entries()) {
    if (isEmptyDescriptor(descriptor.entries)) {
      note(
        'SLUICE_ENVOY_EMPTY_DESCRIPTOR',
        'a descriptor with no entries (or an empty key or value) was answered OK without a rule',
      );
      continue;
    }
    if (descriptor.limit)
      note(
        'SLUICE_ENVOY_LIMIT_OVERRIDE_IGNORED',
        "a descriptor's own limit is ignored: the rules decide (see the @sluice/envoy README)",
      );
    sets.push({
      descriptors: descriptorMap(descriptor.entries, request.domain),
      cost: costOf(request, index),
    });
    positions.push(index);
  }
  return { sets, positions };
}

function bind(server: grpc.Server, host: string, port: number): Promise<number> {
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
}

/** tryShutdown lets calls in flight finish; past `drainMs` the rest are cut. */
function drain(server: grpc.Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, drainMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

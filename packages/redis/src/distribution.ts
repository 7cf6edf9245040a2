import {
  type CompiledRules,
  ConfigError,
  compileRules,
  loadRules,
  parseRules,
  type RulesSource,
  withTimeout,
} from '@sluice/core/store';
import type { Cluster, Redis } from 'ioredis';

/** A client to publish with or read from: a single Redis or a Cluster. */
export type RulesClient = Redis | Cluster;

/** Where a domain's rules live: a hash key and a pub/sub channel. */
export interface RulesLocation {
  /** Key prefix; default `sluice`. */
  readonly prefix?: string;
}

/** Options of {@link publishRules}. */
export interface PublishOptions extends RulesLocation {
  /** Must equal the file's `domain` when given (a guard against pushing a file to the wrong fleet). */
  readonly domain?: string;
  /** Label for problems and for `sluice` to show where a version came from (a path, a commit). */
  readonly source?: string;
  /** How long to wait for the client to connect, in ms; default 2000. */
  readonly timeoutMs?: number;
}

/** What a publish stored. */
export interface Published {
  readonly domain: string;
  readonly version: string;
  /** Increases by one with every publish of the domain: gateways ignore anything older than what they run. */
  readonly serial: number;
  /** Gateways subscribed when the version was published (on a Cluster: those connected to the same node). */
  readonly receivers: number;
}

/** Options of {@link redisRules}. */
export interface RedisRulesOptions extends RulesLocation {
  readonly domain: string;
  /** A local rules file used when Redis cannot be reached at start, or has no version of the domain yet. */
  readonly file?: string;
  /** How long start-up waits for Redis before falling back to `file`, in ms; default 2000. */
  readonly startTimeoutMs?: number;
  /** Told when the gateway starts on its local file because Redis failed; default `process.emitWarning`. */
  readonly warn?: (message: string) => void;
}

/** The hash holding a domain's published rules: `<prefix>:rules:{<domain>}` (a domain is not secret). */
export function rulesKey(domain: string, prefix = 'sluice'): string {
  return `${prefix}:rules:{${domain}}`;
}

/** The channel on which new versions of a domain are announced. */
export function rulesChannel(domain: string, prefix = 'sluice'): string {
  return `${prefix}:rules:${domain}`;
}

// Stores the text and version and announces them in one atomic step, so a gateway that reads the hash after
// missing the message sees the same version the message carried.
const PUBLISH_SCRIPT = `
local serial = redis.call('HINCRBY', KEYS[1], 'serial', 1)
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'text', ARGV[3], 'source', ARGV[4], 'published_at', ARGV[5])
local message = cjson.encode({serial = serial, version = ARGV[2], text = ARGV[3], source = ARGV[4]})
return {serial, redis.call('PUBLISH', ARGV[1], message)}
`.trim();
// KEYS[1]: the domain's hash (rulesKey)
// ARGV[1]: the channel (rulesChannel)
// ARGV[2]: the compiled version
// ARGV[3]: the rules file text
// ARGV[4]: the source label
// ARGV[5]: publish time, ms since the epoch

/** Validates and compiles a rules file, stores it as the domain's current version and announces it. */
export async function publishRules(
  client: RulesClient,
  text: string,
  options: PublishOptions = {},
): Promise<Published> {
  const source = options.source ?? '<rules>';
  const rules = compileRules(parseRules(text, { source }));
  if (options.domain !== undefined && options.domain !== rules.domain) {
    throw new ConfigError(`${source} is for domain "${rules.domain}", not "${options.domain}"`);
  }
  const key = rulesKey(rules.domain, options.prefix);
  const channel = rulesChannel(rules.domain, options.prefix);
  await whenReady(client, options.timeoutMs ?? 2000);
  const reply = (await client.eval(
    PUBLISH_SCRIPT,
    1,
    key,
    channel,
    rules.version,
    text,
    source,
    String(Date.now()),
  )) as [number, number];
  return { domain: rules.domain, version: rules.version, serial: reply[0], receivers: reply[1] };
}

/** A version as stored or announced: the serial orders them, the text is checked again by every gateway. */
interface Payload {
  readonly serial: number;
  readonly text: string;
  readonly source: string;
}

function payloadOf(value: unknown): Payload {
  const p = value as Partial<Record<keyof Payload, unknown>> | null;
  const serial = Number(p?.serial);
  if (typeof p?.text !== 'string' || !Number.isSafeInteger(serial)) {
    throw new ConfigError('rules payload from Redis has no text or serial');
  }
  return { serial, text: p.text, source: typeof p.source === 'string' ? p.source : 'redis' };
}

/** Rejects after `ms` unless `promise` settles first, naming what Redis did not answer. */
function inTime<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return withTimeout(promise, ms, () => new Error(`${what}: no answer from Redis in ${ms} ms`));
}

/** Resolves once a connection is ready (connecting a lazy one); rejects after `timeoutMs`. */
function whenReady(redis: RulesClient, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'wait') redis.connect().catch(() => {});
  const ready = new Promise<void>((resolve) => redis.once('ready', () => resolve()));
  return inTime(ready, timeoutMs, 'connecting to Redis');
}

/**
 * A RulesSource fed through Redis: loads the domain's published version at start, subscribes (on a duplicate
 * connection) and switches on each publish. A bad payload or a Redis error keeps the last good version and is
 * reported to subscribers' `onError`. When Redis cannot be reached at start, the local `file` is used (and the
 * fallback is reported through `warn` and `onError`); after a reconnect the published version is read again.
 * The subscription closes with `close()`, or by itself when `client` ends (quit or disconnect).
 */
export async function redisRules(client: RulesClient, options: RedisRulesOptions): Promise<RulesSource> {
  const { domain } = options;
  const key = rulesKey(domain, options.prefix);
  const channel = rulesChannel(domain, options.prefix);
  const warn = options.warn ?? ((message: string) => process.emitWarning(message, 'SluiceRulesWarning'));
  const subscribers = new Set<{ onRules: (r: CompiledRules) => void; onError?: (e: Error) => void }>();
  const pendingErrors: Error[] = [];
  let serial = 0;
  let current: CompiledRules | undefined;

  const report = (error: Error) => {
    if (subscribers.size === 0) pendingErrors.push(error);
    for (const s of subscribers) s.onError?.(error);
  };

  /** Compiles a payload and swaps it in if it is newer; throws when it is not usable. */
  function apply(payload: Payload): void {
    if (payload.serial <= serial) return;
    const next = compileRules(parseRules(payload.text, { source: `redis:${key} (${payload.source})` }));
    if (next.domain !== domain) {
      throw new ConfigError(`rules published under ${key} are for domain "${next.domain}", not "${domain}"`);
    }
    serial = payload.serial;
    if (current?.version === next.version) return;
    current = next;
    for (const s of subscribers) s.onRules(next);
  }

  const tryApply = (read: () => Payload) => {
    try {
      apply(read());
    } catch (error) {
      report(error instanceof Error ? error : new Error(String(error)));
    }
  };

  async function readStored(): Promise<Payload | undefined> {
    const stored = await client.hgetall(key);
    return stored.text === undefined ? undefined : payloadOf(stored);
  }

  const timeoutMs = options.startTimeoutMs ?? 2000;
  const subscriber = client.duplicate();
  let subscribed = false;
  // Subscribe before reading, so that no publish falls between the two. Both wait for their connection: a
  // client without an offline queue (recommendedRedisOptions) refuses commands until it is ready.
  async function subscribeAndRead(): Promise<void> {
    if (!subscribed) {
      await whenReady(subscriber, timeoutMs);
      await subscriber.subscribe(channel);
      subscribed = true;
    }
    await whenReady(client, timeoutMs);
    const payload = await readStored();
    if (payload) apply(payload);
  }

  // Connection errors while Redis is away are expected; the reads after reconnecting report what matters.
  subscriber.on('error', () => {});
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) tryApply(() => payloadOf(JSON.parse(message)));
  });
  let started = false;
  subscriber.on('ready', () => {
    // A reconnect may have missed publishes (or a start on the file never subscribed): catch up.
    if (started) subscribeAndRead().catch((error: Error) => report(error));
  });

  try {
    await inTime(subscribeAndRead(), timeoutMs, `loading ${key}`);
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    if (options.file === undefined) {
      subscriber.disconnect();
      throw failure;
    }
    warn(`sluice: rules for ${domain} not loaded from Redis (${failure.message}); using ${options.file}`);
    pendingErrors.push(failure);
  }
  started = true;
  if (current === undefined) {
    if (options.file === undefined) {
      subscriber.disconnect();
      throw new ConfigError(`no rules published for domain "${domain}" (${key}) and no local file given`);
    }
    const local = compileRules(await loadRules(options.file));
    if (local.domain !== domain) {
      throw new ConfigError(`${options.file} is for domain "${local.domain}", not "${domain}"`);
    }
    current = local;
  }
  const initial: CompiledRules = current;

  // The subscriber connection is ours: it closes with the client it was duplicated from, so that an app
  // that quits its client (and forgets close()) is not kept alive by the subscription.
  const closeSubscriber = () => {
    subscribers.clear();
    subscriber.disconnect();
  };
  client.once('end', closeSubscriber);

  return {
    get current() {
      return current ?? initial;
    },
    subscribe(onRules, onError) {
      const entry = onError ? { onRules, onError } : { onRules };
      subscribers.add(entry);
      // Tell the first subscriber (the limiter, then its observer) about a start on the fallback file.
      for (const error of pendingErrors.splice(0)) onError?.(error);
      return () => subscribers.delete(entry);
    },
    async close() {
      client.off('end', closeSubscriber);
      closeSubscriber();
    },
  };
}

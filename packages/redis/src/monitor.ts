/** Where RedisStore's notices go: `console` by default; pino, winston and most loggers fit. */
export interface StoreLogger {
  warn(message: string): void;
}

/** The notices RedisStore logs, by stable code. */
export const STORE_NOTICES = {
  SLUICE_STORE_UNREACHABLE: 'Redis store unreachable',
  SLUICE_STORE_RECOVERED: 'Redis store reachable again',
  SLUICE_REDIS_EVICTION: 'Redis may evict limiter keys',
} as const;

/** What a failing store does meanwhile, for the notice. */
export type FailureMode = 'failing open' | 'answering from the in-process fallback';

/**
 * The store's own view of failure: since when calls fail (for `health()`), and telling the logger once
 * when Redis becomes unreachable and once when it answers again, instead of a line per failed reconnect.
 * "Unreachable" is a failure while the client is disconnected, or `threshold` failures in a row (a hung
 * Redis, or the breaker opening); a lone timeout is not.
 */
export class FailureMonitor {
  readonly #logger: StoreLogger;
  readonly #threshold: number;
  readonly #mode: FailureMode;
  #since: number | undefined;
  #consecutive = 0;
  #told = false;
  #cause: string | undefined;

  constructor(logger: StoreLogger, threshold: number, mode: FailureMode) {
    this.#logger = logger;
    this.#threshold = threshold;
    this.#mode = mode;
  }

  /** Epoch ms (the limiter's clock) of the first failure of the current run of failures. */
  get failingSince(): number | undefined {
    return this.#since;
  }

  /** An `error` event of the client: kept as the cause to name (its code, never a key). */
  clientError(error: Error & { code?: unknown }): void {
    this.#cause = typeof error.code === 'string' ? error.code : error.name;
  }

  succeeded(now: number): void {
    if (this.#since === undefined) return;
    if (this.#told) {
      const after = Math.max(0, Math.round(now - this.#since));
      this.#notice('SLUICE_STORE_RECOVERED', `after ${after} ms`);
    }
    this.#since = undefined;
    this.#consecutive = 0;
    this.#told = false;
    this.#cause = undefined;
  }

  failed(now: number, disconnected: boolean, code: string): void {
    this.#since ??= now;
    this.#consecutive += 1;
    if (this.#told || (!disconnected && this.#consecutive < this.#threshold)) return;
    this.#told = true;
    this.#notice('SLUICE_STORE_UNREACHABLE', `(${this.#cause ?? code}), ${this.#mode} until it answers`);
  }

  #notice(code: keyof typeof STORE_NOTICES, detail: string): void {
    try {
      this.#logger.warn(`sluice: ${STORE_NOTICES[code]} ${detail} [${code}]`);
    } catch {
      // A failing logger must not turn a store failure into a request failure.
    }
  }
}

/** Eviction policies under which Redis never removes a key to make room. */
const SAFE_POLICIES = new Set(['noeviction']);

/**
 * Warns once if Redis may evict limiter keys when it reaches `maxmemory`: allkeys-* evict any key, and
 * volatile-* any key with a TTL, which every Sluice key has. `config` runs CONFIG GET; a Redis that
 * refuses CONFIG (managed services) is not warned about.
 */
export async function warnIfEvicting(
  config: () => Promise<unknown>,
  logger: StoreLogger,
): Promise<string | undefined> {
  let reply: unknown;
  try {
    reply = await config();
  } catch {
    return undefined;
  }
  const policy = Array.isArray(reply) ? reply[1] : undefined;
  if (typeof policy !== 'string' || SAFE_POLICIES.has(policy)) return undefined;
  try {
    logger.warn(
      `sluice: ${STORE_NOTICES.SLUICE_REDIS_EVICTION}: maxmemory-policy is ${policy}; when Redis is full it can ` +
        "drop a limited client's counter and let it in again. Use noeviction (and alert on memory) " +
        '[SLUICE_REDIS_EVICTION]',
    );
  } catch {
    // As above: never thrown into the caller.
  }
  return policy;
}

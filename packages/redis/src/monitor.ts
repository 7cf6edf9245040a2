/** Where RedisStore's notices go: `console` by default; pino, winston and most loggers fit. */
export interface StoreLogger {
  warn(message: string): void;
}

/** The notices RedisStore logs, by stable code (the first two by core's resilient store, named Redis). */
export const STORE_NOTICES = {
  SLUICE_STORE_UNREACHABLE: 'Redis store unreachable',
  SLUICE_STORE_RECOVERED: 'Redis store reachable again',
  SLUICE_REDIS_EVICTION: 'Redis may evict limiter keys',
  SLUICE_STORE_CLOSED: 'RedisStore used after close()',
} as const;

/** Warns that a closed store was asked to decide: every such call fails (the rule's on_store_error decides). */
export function warnClosed(logger: StoreLogger): void {
  try {
    logger.warn(
      `sluice: ${STORE_NOTICES.SLUICE_STORE_CLOSED}: its calls fail and each rule's on_store_error decides. ` +
        'Build a new RedisStore, or do not close one that another limiter still uses [SLUICE_STORE_CLOSED]',
    );
  } catch {
    // Never thrown into the caller.
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

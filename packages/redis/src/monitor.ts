/** Where RedisStore's notices go: `console` by default; pino, winston and most loggers fit. */
export interface StoreLogger {
  warn(message: string): void;
}

/** The notices RedisStore logs, by stable code (the first two by core's resilient store, named Redis). */
export const STORE_NOTICES = {
  SLUICE_STORE_UNREACHABLE: 'Redis store unreachable',
  SLUICE_STORE_RECOVERED: 'Redis store reachable again',
  SLUICE_REDIS_EVICTION: 'Redis may evict limiter keys',
} as const;

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

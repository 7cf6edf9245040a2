/** First reconnection delay ceiling, ms: a blip costs tens of milliseconds. */
export const RETRY_BASE_MS = 50;
/** Largest reconnection delay, ms: a Redis back from an outage is counting in again within a second. */
export const RETRY_MAX_MS = 800;

/**
 * Delay before reconnection attempt `times` (1-based): an exponential ceiling (50, 100, 200 ms ... up to
 * 800 ms) and a random point in its upper half ("equal jitter"), so that a fleet of gateways that lost Redis
 * together does not come back in lockstep, while no gateway waits much less than the backoff intends.
 */
export function jitteredRetryDelay(times: number, random: () => number = Math.random): number {
  const attempt = Number.isFinite(times) && times >= 1 ? Math.floor(times) : 1;
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 16));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Reconnects (without resending the command) when Redis answers READONLY: the server this connection
 * reaches was demoted to a replica by a failover, and a new connection (through Sentinel, a DNS name or
 * a virtual IP) reaches the new primary.
 */
export function reconnectOnReadonly(error: Error): 1 | false {
  return error.message.startsWith('READONLY') ? 1 : false;
}

/**
 * ioredis settings for a limiter's client: fail at once while disconnected instead of queueing (the store
 * also refuses to queue, see `maxPending`), give up on a command after one reconnection, never replay
 * evaluations made for requests that were already decided, reconnect with jitter, and reconnect when a
 * failover made the server read-only. For a Cluster pass them as `redisOptions` and set
 * `enableOfflineQueue: false` on the Cluster too.
 */
export const recommendedRedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (times: number): number => jitteredRetryDelay(times),
  reconnectOnError: reconnectOnReadonly,
} as const;

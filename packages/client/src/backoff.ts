/** Backoff of retries that come without a Retry-After: full jitter over an exponential ceiling. */
export interface BackoffOptions {
  /** Ceiling of the first retry's wait, ms; it doubles each attempt. Default 500. */
  readonly baseMs?: number;
  /** Highest ceiling, ms. Default 10,000. */
  readonly capMs?: number;
}

/** Defaults: ceilings of 0.5 s, 1 s, 2 s, ... up to 10 s. */
export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 500, capMs: 10_000 };

/** What a retry's wait is computed from. */
export interface DelayInput {
  /** The wait the server asked for (Retry-After, or the reset of an exhausted policy), ms. */
  readonly serverWaitMs: number | undefined;
  /** The attempt that was just refused, 1 for the first. */
  readonly attempt: number;
  readonly jitterMs: number;
  readonly backoff: Required<BackoffOptions>;
  readonly random: () => number;
}

/**
 * The wait before the next attempt: the server's wait plus a random part of `jitterMs` (clients refused
 * together then come back spread over the jitter instead of in the same millisecond), or, when the
 * server named no wait, a random wait below the exponential ceiling (full jitter).
 */
export function retryDelay(input: DelayInput): number {
  if (input.serverWaitMs !== undefined) return input.serverWaitMs + input.random() * input.jitterMs;
  const ceiling = Math.min(input.backoff.capMs, input.backoff.baseMs * 2 ** (input.attempt - 1));
  return input.random() * ceiling;
}

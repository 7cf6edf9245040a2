import type { AlgorithmName } from '@sluice/core/store';

/**
 * What one key and one check cost Redis, per algorithm: the figures measured by `bench/redis-ops.ts` and published
 * in the @sluice/redis README (Sizing): `used_memory` growth per key (the key, its expiry entry and the keyspace's
 * share), and the script's own time per request (`INFO commandstats`, calls coalesced about 64 at a time) on a new
 * key and on one hot key.
 */
export interface AlgorithmFigures {
  readonly bytesPerKey: number;
  readonly usNewKey: number;
  readonly usHotKey: number;
}

/** The table of the @sluice/redis README (Sizing), redis-server 7.0. */
export const REDIS_FIGURES: Readonly<Record<AlgorithmName, AlgorithmFigures>> = {
  fixed_window: { bytesPerKey: 192, usNewKey: 6.2, usHotKey: 2.3 },
  // fixed_window's figures: the same stored string "<start> <count>" and the same Lua steps (not measured apart).
  first_request_window: { bytesPerKey: 192, usNewKey: 6.2, usHotKey: 2.3 },
  sliding_window: { bytesPerKey: 193, usNewKey: 6.3, usHotKey: 2.2 },
  sliding_log: { bytesPerKey: 214, usNewKey: 10.4, usHotKey: 12.1 },
  token_bucket: { bytesPerKey: 195, usNewKey: 6.1, usHotKey: 2.1 },
  gcra: { bytesPerKey: 193, usNewKey: 6.6, usHotKey: 2.3 },
  leaky_bucket: { bytesPerKey: 193, usNewKey: 6.6, usHotKey: 2.2 },
  concurrency: { bytesPerKey: 197, usNewKey: 11.4, usHotKey: 10.5 },
  quota: { bytesPerKey: 195, usNewKey: 6.3, usHotKey: 2.1 },
};

/**
 * The part of a script call's time that is the call itself, not its checks: one sliding_window check costs 6.3 µs,
 * three checks (the README's three-rule row) 16.2 µs, so each further check adds about 4.95 µs and the call 1.35.
 */
export const CALL_US = 1.35;

/**
 * The run the Redis CPU figures below come from. Redis CPU is the whole server's (INFO cpu: user + system: the
 * script, reading the call, writing the reply), not only the script's own time that the table above gives.
 */
export const CAPACITY_RUN =
  'bench/capacity-scale.ts, run of 5 December 2026 (redis-server 7.0.15, 2 M keys, 5 rounds; a shared 2-vCPU machine at load average 12-17)';

/**
 * What {@link CAPACITY_RUN} measured for the source's example on one redis-server (a sliding_window key per API
 * key, 2 M keys with 200 k active, Zipf-skewed; a token_bucket key for /search on half the requests: 1.5 checks per
 * request), Sluice coalesced (3 gateways, 32 requests in flight each) and with `coalesce: false`: script calls and
 * Redis CPU (µs) per request, medians of the rounds (`--no-fill --contenders=sluice,sluice-uncoalesced
 * --modes=max --rounds=5 --seconds=4 --sluice-timeout=1000`: a fixed 1 s time limit, because on that loaded machine
 * the default's 200 ms stall watchdog failed every uncoalesced round open). The full run: bench/README.md.
 */
export const MEASURED = {
  coalesced: { callsPerRequest: 0.031, cpuUsPerRequest: 20.2 },
  uncoalesced: { callsPerRequest: 1, cpuUsPerRequest: 39.5 },
} as const;

/** Checks per request in {@link MEASURED}: the per-key rule on every request, the /search rule on half. */
export const MEASURED_CHECKS_PER_REQUEST = 1.5;

/** Redis CPU per script call, whatever its checks: the slope of the line through the two rows of {@link MEASURED}. */
export const CPU_US_PER_CALL =
  (MEASURED.uncoalesced.cpuUsPerRequest - MEASURED.coalesced.cpuUsPerRequest) /
  (MEASURED.uncoalesced.callsPerRequest - MEASURED.coalesced.callsPerRequest);

/**
 * Redis CPU per check of the source's example: the same line at no call, over its checks. Other rules are scaled
 * from it by their script time (the table above): see {@link SOURCE_SCRIPT_US_PER_CHECK}.
 */
export const CPU_US_PER_CHECK =
  (MEASURED.coalesced.cpuUsPerRequest - CPU_US_PER_CALL * MEASURED.coalesced.callsPerRequest) /
  MEASURED_CHECKS_PER_REQUEST;

/** Script calls per request when coalesced as in {@link MEASURED}; a gateway with fewer requests in flight sends more. */
export const COALESCED_CALLS_PER_REQUEST = MEASURED.coalesced.callsPerRequest;

/**
 * The source example's script time per check by the table above (key_default: a sliding_window key a few times
 * a minute; search_global: a token_bucket key hot, on half the requests): what {@link CPU_US_PER_CHECK} is per.
 */
export const SOURCE_SCRIPT_US_PER_CHECK =
  (REDIS_FIGURES.sliding_window.usNewKey - CALL_US + 0.5 * (REDIS_FIGURES.token_bucket.usHotKey - CALL_US)) /
  MEASURED_CHECKS_PER_REQUEST;

/** sliding_log members: about 30 B each while a member is one logged millisecond of up to 128, then about 125. */
export function slidingLogBytes(entries: number): number {
  const small = Math.min(entries, 128);
  return (
    REDIS_FIGURES.sliding_log.bytesPerKey + 30 * Math.max(0, small - 1) + 125 * Math.max(0, entries - 128)
  );
}

/**
 * A ban state key (`<prefix>:{<tag>}:<rule>:ban`: violations, ban end and level as five numbers of text, with a
 * TTL): `used_memory` growth per key, 20,000 keys on redis-server 7.0 (a fixed_window counter measured alike: 178).
 */
export const BAN_STATE_BYTES = 225;

/** An idempotency marker key (`<prefix>:{<tag>}:<rule>:idem:<hash>`: its expiry as text, with a TTL), measured alike. */
export const MARKER_BYTES = 193;

/** Redis Cluster's hash slots. */
export const CLUSTER_SLOTS = 16_384;

/** A key taking more increments a second than this should be split (`shards:`): it lives on one primary. */
export const HOT_KEY_PER_SECOND = 25_000;

import {
  allowedSlowShare,
  type FactorReport,
  type FactorStore,
  hashText,
  QUIET_INTERVALS,
  StoreError,
} from '@sluice/core/store';
import { compact } from './script.js';
import { type RedisScript, type RedisTransport, redisScript } from './transport.js';

/** A rule's shared factor outlives its last report by this much at least (then it is back to 1). */
export const FACTOR_TTL_MS = 60_000;

/**
 * The Lua side of core's adaptive/aimd.ts `adaptFactor`: folds one gateway's report into a rule's factor
 * hash (f: factor, s: interval start, n: responses, e: 5xx, l: slow) and answers the factor, as text (a Lua
 * number returned to Redis would be cut to an integer).
 */
const ADAPT_LUA = compact(`
local key = KEYS[1]                    -- the rule's factor hash
local now = tonumber(ARGV[1])          -- the caller's clock, ms
local requests = tonumber(ARGV[2])     -- responses seen since the gateway's last report
local errors = tonumber(ARGV[3])       -- of which 5xx
local slow = tonumber(ARGV[4])         -- of which slower than the latency target
local pin = tonumber(ARGV[5])          -- a circuit breaker's factor, -1 for none
local interval = tonumber(ARGV[6])     -- ms between judgements
local decrease = tonumber(ARGV[7])     -- factor multiplier when unhealthy
local increase = tonumber(ARGV[8])     -- factor step when healthy
local floor = tonumber(ARGV[9])        -- the least factor
local min_samples = tonumber(ARGV[10]) -- fewer responses prove nothing bad
local error_rate = tonumber(ARGV[11])  -- target share of 5xx, -1 when not watched
local slow_share = tonumber(ARGV[12])  -- share of slow responses the percentile allows, -1 when not watched
local ttl = tonumber(ARGV[13])         -- ms the state is kept after this report
local quiet = tonumber(ARGV[14])       -- intervals a rule with too few responses gathers before being judged

local function clamp(f)
  return math.min(1, math.max(floor, f))
end

local factor, since, n, e, l
if pin >= 0 then
  factor, since, n, e, l = clamp(pin), now, 0, 0, 0
else
  local state = redis.call('HMGET', key, 'f', 's', 'n', 'e', 'l')
  factor = tonumber(state[1]) or 1
  since = tonumber(state[2]) or now
  n = (tonumber(state[3]) or 0) + requests
  e = (tonumber(state[4]) or 0) + errors
  l = (tonumber(state[5]) or 0) + slow
  if now - since >= interval and (n >= min_samples or now - since >= quiet * interval) then
    local bad = n >= min_samples and
      ((error_rate >= 0 and e / n > error_rate) or (slow_share >= 0 and l / n > slow_share))
    if bad then factor = factor * decrease else factor = factor + increase end
    factor, since, n, e, l = clamp(factor), now, 0, 0, 0
  end
end
local text = string.format('%.17g', factor)
redis.call('HSET', key, 'f', text, 's', since, 'n', n, 'e', e, 'l', l)
redis.call('PEXPIRE', key, ttl)
return text
`);

/** The script that shares adaptive factors. */
export const ADAPT_SCRIPT: RedisScript = redisScript('AdaptFactor', ADAPT_LUA);

/** A rule's factor key: the rule id hashed (names stay out of Redis), in a hash tag of its own. */
export function factorKey(prefix: string, id: string): string {
  return `${prefix}:{adaptive:${hashText(id)}}:factor`;
}

/** The script's arguments for one report: one key, then the report and the rule's policy. */
export function factorArgs(key: string, report: FactorReport, now: number): (string | number)[] {
  const { policy } = report;
  return [
    1,
    key,
    now,
    report.requests,
    report.errors,
    report.slow,
    report.pin ?? -1,
    policy.intervalMs,
    policy.decrease,
    policy.increase,
    policy.floor,
    policy.minSamples,
    policy.errorRate ?? -1,
    allowedSlowShare(policy) ?? -1,
    Math.max(FACTOR_TTL_MS, 20 * policy.intervalMs),
    QUIET_INTERVALS,
  ];
}

/**
 * Adaptive factors shared by every gateway through Redis: one small hash per rule, with a TTL, written by
 * one script call per report (a few a second per rule per gateway, never per request).
 */
export class RedisFactors implements FactorStore {
  readonly #transport: RedisTransport;
  readonly #prefix: string;

  constructor(transport: RedisTransport, prefix: string) {
    this.#transport = transport;
    this.#prefix = prefix;
  }

  async adaptFactor(report: FactorReport, now: number): Promise<number> {
    // While the connection is down a report would only queue up for the reconnect: the last factor stays.
    if (this.#transport.state() === 'down')
      throw new StoreError('ERR_SLUICE_STORE', 'Redis is not connected');
    const args = factorArgs(factorKey(this.#prefix, report.id), report, now);
    return Number(await this.#transport.runScript(ADAPT_SCRIPT, args, false));
  }
}

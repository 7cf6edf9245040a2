import { chargeExtra, refundSharedLua } from './refund.js';
import { storedLua } from './stored.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/** The cost an entry of a sliding_log set holds, shared by the algorithm and its refund. */
const slidingLogCostLua = `
${storedLua}
-- The cost a member "<time>:<cost>" holds (0 for a member that holds none).
local function sl_cost(member)
  return stored_count(tonumber(string.match(member, ':(.+)$')))
end
`;

/**
 * sliding_log in Lua: core's slidingLog.ts. A sorted set scored by request time; the member
 * "<time>:<cost>" holds the cost, one member per millisecond (same-millisecond requests merge).
 */
export const slidingLogLua: LuaAlgorithm = {
  name: 'sliding_log',
  code: 'sl',
  keys: ['sl'],
  extra: noExtra,
  lua: `
${slidingLogCostLua}
-- sliding_log
-- KEYS[k]: sorted set, score = request time (ms), member = "<time>:<cost>"
-- limit:   units per window
-- window:  window length, ms
-- cost:    units this request takes

-- Entries still counted at now, and whether any lies too far ahead to count: counted are those within the
-- last window, or up to one window ahead (a clock that stepped back); further ahead they are stale or
-- corrupt (core's live).
local function sl_live(key, now, window)
  local flat = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(now - window), '+inf', 'WITHSCORES')
  local entries = {}
  local far = false
  for i = 1, #flat, 2 do
    local at = tonumber(flat[i + 1])
    if at - now > window then
      far = true
    else
      entries[#entries + 1] = {at = at, cost = sl_cost(flat[i])}
    end
  end
  return entries, far
end

-- An entry ahead of now counts as made now, so that the wait stays within the window; times round up.
local function sl_wait_to_free(entries, excess, now, window)
  local freed = 0
  for _, entry in ipairs(entries) do
    freed = freed + entry.cost
    if freed >= excess then return math.min(math.ceil(entry.at), now) + window - now end
  end
  return 0
end

-- The time until every entry has left the window (entries ahead of now counted as made now), and how
-- long the log must be kept (until its newest entry, wherever it lies, has left the window).
local function sl_until_empty(entries, now, window, extra_at)
  local newest = extra_at
  for _, entry in ipairs(entries) do
    if newest == nil or entry.at > newest then newest = entry.at end
  end
  if newest == nil then return 0, 0 end
  newest = math.ceil(newest)
  return math.min(newest, now) + window - now, newest + window - now
end

WRITERS.sl = function(k, now, window, cost, keep)
  local key = KEYS[k]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window))
  if cost > 0 then
    local merged = cost
    local same = redis.call('ZRANGEBYSCORE', key, fmt(now), fmt(now))
    for _, member in ipairs(same) do
      merged = merged + sl_cost(member)
      redis.call('ZREM', key, member)
    end
    redis.call('ZADD', key, fmt(now), fmt(now) .. ':' .. fmt(merged))
  end
  if keep > 0 then redis.call('PEXPIRE', key, math.ceil(keep) + MARGIN_MS) end
end

-- sl, after dropping the entries too far ahead to count (see sl_live).
WRITERS.sf = function(k, now, window, cost, keep)
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '(' .. fmt(now + window), '+inf')
  WRITERS.sl(k, now, window, cost, keep)
end

ALGORITHMS.sl = function(k, t, limit, window, burst, cost)
  local entries, far = sl_live(KEYS[k], t, window)
  local used = 0
  for _, entry in ipairs(entries) do used = used + entry.cost end
  if cost > limit or used + cost > limit then
    local retry = NEVER
    if cost <= limit then retry = sl_wait_to_free(entries, used + cost - limit, t, window) end
    return false, limit, math.max(0, limit - used), (sl_until_empty(entries, t, window, nil)), retry
  end
  local newest_extra = nil
  if cost > 0 then newest_extra = t end
  local reset, keep = sl_until_empty(entries, t, window, newest_extra)
  local writer = 'sl'
  if far then writer = 'sf' end
  return true, limit, math.max(0, limit - used - cost), reset, 0, nil, writer, t, window, cost, keep
end
`,
};

/** sliding_log's refund (core's slidingLog.refund): off the charge's own entry, while it is in the window. */
export const slidingLogRefundLua: LuaAlgorithm = {
  name: 'sliding_log',
  code: 'slr',
  keys: ['sl'],
  extra: (check) => chargeExtra(check),
  lua: `
${slidingLogCostLua}
${refundSharedLua}
-- sliding_log refund
-- KEYS[k]: the sliding_log set of the rule and tag
-- window:  window length, ms
-- cost:    units to give back
-- extra:   the charge (see charge_of)
-- The entry at "at" holds "left" units from now on (none: it goes); the set is kept until its newest entry
-- has left the window.
WRITERS.slr = function(k, now, at, left, window)
  local key = KEYS[k]
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', key, fmt(at), fmt(at))) do redis.call('ZREM', key, member) end
  if left > 0 then redis.call('ZADD', key, fmt(at), fmt(at) .. ':' .. fmt(left)) end
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if newest[2] ~= nil then
    redis.call('PEXPIRE', key, math.ceil(tonumber(newest[2])) + window - now + MARGIN_MS)
  end
end

ALGORITHMS.slr = function(k, now, limit, window, burst, cost, extra)
  local at = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  at = math.floor(at)
  if now - at >= window or at - now > window then return false, limit, 0, 0, 0 end
  local held = 0
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[k], fmt(at), fmt(at))) do held = held + sl_cost(member) end
  if held <= 0 then return false, limit, 0, 0, 0 end
  return true, limit, 0, 0, 0, nil, 'slr', now, at, math.max(0, held - cost), window
end
`,
};

import { type LuaAlgorithm, noExtra } from './types.js';

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
-- sliding_log
-- KEYS[k]: sorted set, score = request time (ms), member = "<time>:<cost>"
-- limit:   units per window
-- window:  window length, ms
-- cost:    units this request takes
local function sl_live(key, now, window)
  local flat = redis.call('ZRANGEBYSCORE', key, '(' .. fmt(now - window), '+inf', 'WITHSCORES')
  local entries = {}
  for i = 1, #flat, 2 do
    local entry_cost = string.match(flat[i], ':(.+)$')
    entries[#entries + 1] = {at = tonumber(flat[i + 1]), cost = tonumber(entry_cost)}
  end
  return entries
end

local function sl_wait_to_free(entries, excess, now, window)
  local freed = 0
  for _, entry in ipairs(entries) do
    freed = freed + entry.cost
    if freed >= excess then return entry.at + window - now end
  end
  return 0
end

local function sl_until_empty(entries, now, window, extra_at)
  local newest = extra_at
  for _, entry in ipairs(entries) do
    if newest == nil or entry.at > newest then newest = entry.at end
  end
  if newest == nil then return 0 end
  return newest + window - now
end

WRITERS.sl = function(k, now, window, cost, reset)
  local key = KEYS[k]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window))
  if cost > 0 then
    local merged = cost
    local same = redis.call('ZRANGEBYSCORE', key, fmt(now), fmt(now))
    for _, member in ipairs(same) do
      merged = merged + tonumber(string.match(member, ':(.+)$'))
      redis.call('ZREM', key, member)
    end
    redis.call('ZADD', key, fmt(now), fmt(now) .. ':' .. fmt(merged))
  end
  if reset > 0 then redis.call('PEXPIRE', key, math.ceil(reset) + MARGIN_MS) end
end

ALGORITHMS.sl = function(k, t, limit, window, burst, cost)
  local entries = sl_live(KEYS[k], t, window)
  local used = 0
  for _, entry in ipairs(entries) do used = used + entry.cost end
  if cost > limit or used + cost > limit then
    local retry = NEVER
    if cost <= limit then retry = sl_wait_to_free(entries, used + cost - limit, t, window) end
    return false, limit, math.max(0, limit - used), sl_until_empty(entries, t, window, nil), retry
  end
  local newest_extra = nil
  if cost > 0 then newest_extra = t end
  local reset = sl_until_empty(entries, t, window, newest_extra)
  return true, limit, math.max(0, limit - used - cost), reset, 0, nil, 'sl', t, window, cost, reset
end
`,
};

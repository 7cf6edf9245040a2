import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * token_bucket in Lua: core's tokenBucket.ts. Tokens are kept in units of 1/windowMs token, so that the
 * refill of `limit` units per ms stays in integers.
 */
export const tokenBucketLua: LuaAlgorithm = {
  name: 'token_bucket',
  code: 'tb',
  keys: ['tb'],
  extra: noExtra,
  lua: `
-- token_bucket
-- KEYS[k]: string "<tokens x windowMs> <time counted, ms>"
-- limit:   tokens refilled per window
-- window:  refill window, ms
-- burst:   bucket capacity, tokens
-- cost:    tokens this request takes
local function tb_refill_ms(units, limit)
  if limit > 0 then return math.ceil(units / limit) end
  return 0
end

ALGORITHMS.tb = function(k, t, limit, window, burst, cost)
  local capacity = 0
  if limit > 0 then capacity = burst * window end
  local stored, counted_at = read2(KEYS[k])
  local units = capacity
  -- As core's unitsAt: before counted_at (a clock that stepped back) the refill runs backwards, down to
  -- an empty bucket; a state further ahead still, or not a number, reads as a full bucket.
  if stored ~= nil and stored == stored and counted_at ~= nil then
    local tokens = math.min(capacity, math.max(0, stored))
    local elapsed = t - counted_at
    if elapsed >= 0 then
      local missing = capacity - tokens
      if missing > 0 and elapsed < math.ceil(missing / limit) then
        units = math.min(capacity, tokens + elapsed * limit)
      end
    else
      local back = tokens + elapsed * limit
      if back >= 0 then units = back elseif back >= -capacity then units = 0 end
    end
  end
  local needed = cost * window
  if needed > capacity or units < needed then
    local retry = NEVER
    if needed <= capacity then retry = tb_refill_ms(needed - units, limit) end
    return false, limit, math.floor(units / window), tb_refill_ms(capacity - units, limit), retry
  end
  local left = units - needed
  local reset = tb_refill_ms(capacity - left, limit)
  return true, limit, math.floor(left / window), reset, 0, nil, 2, left, t, reset
end
`,
};

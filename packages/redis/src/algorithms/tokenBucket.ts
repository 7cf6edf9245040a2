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
  if stored then
    local missing = capacity - stored
    if missing > 0 then
      local elapsed = math.max(0, t - counted_at)
      if elapsed < math.ceil(missing / limit) then units = stored + elapsed * limit end
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
  local at = t
  if stored then at = math.max(t, counted_at) end
  return true, limit, math.floor(left / window), reset, 0, nil, 2, left, at, reset
end
`,
};

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
-- keys[1]:  string "<tokens x windowMs> <time counted, ms>"
-- p.limit:  tokens refilled per window
-- p.window: refill window, ms
-- p.burst:  bucket capacity, tokens
-- cost:     tokens this request takes
local function tb_refill_ms(units, p)
  if p.limit > 0 then return math.ceil(units / p.limit) end
  return 0
end

ALGORITHMS.tb = function(keys, now, p, cost)
  local t = math.floor(now)
  local capacity = 0
  if p.limit > 0 then capacity = p.burst * p.window end
  local state = read_numbers(keys[1])
  local units = capacity
  if state then
    local missing = capacity - state[1]
    if missing > 0 then
      local elapsed = math.max(0, t - state[2])
      if elapsed < math.ceil(missing / p.limit) then units = state[1] + elapsed * p.limit end
    end
  end
  local needed = cost * p.window
  if needed > capacity or units < needed then
    local retry = NEVER
    if needed <= capacity then retry = tb_refill_ms(needed - units, p) end
    return {
      allowed = false, limit = p.limit, remaining = math.floor(units / p.window),
      reset = tb_refill_ms(capacity - units, p), retry = retry,
    }
  end
  local left = units - needed
  local reset = tb_refill_ms(capacity - left, p)
  local at = t
  if state then at = math.max(t, state[2]) end
  return {
    allowed = true, limit = p.limit, remaining = math.floor(left / p.window), reset = reset, retry = 0,
    commit = function() write_numbers(keys[1], {left, at}, reset) end,
  }
end
`,
};

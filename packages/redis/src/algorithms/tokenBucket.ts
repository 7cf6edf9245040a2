import { chargeExtra, refundSharedLua } from './refund.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/** The reading of a token_bucket key (core's unitsAt), shared by the algorithm and its refund. */
const tokenBucketSharedLua = `
local function tb_refill_ms(units, limit)
  if limit > 0 then return math.ceil(units / limit) end
  return 0
end

local function tb_capacity(limit, window, burst)
  if limit > 0 then return burst * window end
  return 0
end

-- Units in the bucket at t. As core's unitsAt: before the time counted (a clock that stepped back) the
-- refill runs backwards, down to an empty bucket; a state further ahead still, or not a number, reads as a
-- full bucket.
local function tb_units(k, t, limit, capacity)
  local stored, counted_at = read2(KEYS[k])
  local units = capacity
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
  return units
end
`;

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
${tokenBucketSharedLua}
-- token_bucket
-- KEYS[k]: string "<tokens x windowMs> <time counted, ms>"
-- limit:   tokens refilled per window
-- window:  refill window, ms
-- burst:   bucket capacity, tokens
-- cost:    tokens this request takes

ALGORITHMS.tb = function(k, t, limit, window, burst, cost)
  local capacity = tb_capacity(limit, window, burst)
  local units = tb_units(k, t, limit, capacity)
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

/** token_bucket's refund (core's tokenBucket.refund): the tokens of a charge not yet refilled, up to full. */
export const tokenBucketRefundLua: LuaAlgorithm = {
  name: 'token_bucket',
  code: 'tbr',
  keys: ['tb'],
  extra: (check) => chargeExtra(check),
  lua: `
${tokenBucketSharedLua}
${refundSharedLua}
-- token_bucket refund
-- KEYS[k]: the token_bucket key of the rule and tag
-- limit, window, burst: the rule's, as for token_bucket
-- cost:    tokens to give back
-- extra:   the charge (see charge_of)
ALGORITHMS.tbr = function(k, t, limit, window, burst, cost, extra)
  local capacity = tb_capacity(limit, window, burst)
  local units = tb_units(k, t, limit, capacity)
  local at, reset = charge_of(extra)
  local given = math.min(capacity - units, undrained(cost, window, limit, t, at, reset))
  if not (given > 0) then return false, limit, 0, 0, 0 end
  local left = units + given
  local refill = tb_refill_ms(capacity - left, limit)
  return true, limit, 0, refill, 0, nil, 2, left, t, refill
end
`,
};

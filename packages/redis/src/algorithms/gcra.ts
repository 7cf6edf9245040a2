import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * Lua port of core gcra.ts's helpers, shared with leaky_bucket: the TAT is stored as "<whole ms> <sub>",
 * the sub-millisecond part an integer count of 1/limit ms.
 */
export const gcraSharedLua = `
-- gcra helpers; p.limit > 0 whenever a debt exists (a rule with no rate has no tolerance)
local function gcra_tolerance(p)
  if p.limit > 0 then return p.burst * p.window end
  return 0
end

local function gcra_debt(state, now, p)
  if (not state) or state[1] < now then return 0 end
  return (state[1] - now) * p.limit + state[2]
end

local function gcra_ms(debt, p)
  if p.limit > 0 then return math.ceil(debt / p.limit) end
  return 0
end

local function gcra_write(key, now, debt, p, ttl)
  local whole = 0
  if p.limit > 0 then whole = math.floor(debt / p.limit) end
  write_numbers(key, {now + whole, debt - whole * p.limit}, ttl)
end
`;

/** gcra in Lua: core's gcra.ts, one stored theoretical arrival time per key. */
export const gcraLua: LuaAlgorithm = {
  name: 'gcra',
  code: 'gc',
  keys: ['gc'],
  extra: noExtra,
  lua: `
-- gcra
-- keys[1]:  string "<TAT whole ms> <TAT sub-ms, in 1/limit ms>"
-- p.limit:  requests per window (emission interval = window / limit)
-- p.window: window, ms
-- p.burst:  tolerance, requests
-- cost:     units this request takes
ALGORITHMS.gc = function(keys, now, p, cost)
  local t = math.floor(now)
  local tolerance = gcra_tolerance(p)
  local debt = gcra_debt(read_numbers(keys[1]), t, p)
  local added = cost * p.window
  if added > tolerance or debt + added > tolerance then
    local retry = NEVER
    if added <= tolerance then retry = gcra_ms(debt + added - tolerance, p) end
    return {
      allowed = false, limit = p.limit, remaining = math.floor((tolerance - debt) / p.window),
      reset = gcra_ms(debt, p), retry = retry,
    }
  end
  local owed = debt + added
  local reset = gcra_ms(owed, p)
  return {
    allowed = true, limit = p.limit, remaining = math.floor((tolerance - owed) / p.window), reset = reset,
    retry = 0, commit = function() gcra_write(keys[1], t, owed, p, reset) end,
  }
end
`,
};

import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * sliding_window in Lua: core's slidingWindow.ts, the seed's estimate `prev * (1 - elapsed / W) + curr`
 * kept in exact integer arithmetic, with the same search for the exact retry time.
 */
export const slidingWindowLua: LuaAlgorithm = {
  name: 'sliding_window',
  code: 'sw',
  keys: ['sw'],
  extra: noExtra,
  lua: `
-- sliding_window
-- keys[1]:  string "<window index> <prev count> <curr count>"
-- p.limit:  requests per window
-- p.window: window length, ms
-- cost:     units this request takes
local function sw_counts(state, w)
  if (not state) or state[1] < w - 1 then return 0, 0 end
  if state[1] == w - 1 then return state[3], 0 end
  return state[2], state[3]
end

local function sw_fits(prev, curr, elapsed, limit, size, cost)
  return prev * (size - elapsed) + (curr + cost) * size <= limit * size
end

local function sw_fits_at(state, t, limit, size, cost)
  local w = math.floor(t / size)
  local prev, curr = sw_counts(state, w)
  return sw_fits(prev, curr, t - w * size, limit, size, cost)
end

local function sw_earliest_fit(state, now, limit, size, cost)
  local w = math.floor(now / size)
  local prev, curr = sw_counts(state, w)
  local candidate
  local room = limit - curr - cost
  local in_this_window = size
  if room >= 0 and prev > 0 then in_this_window = size - math.floor((room * size) / prev) end
  if in_this_window < size then
    candidate = w * size + in_this_window
  else
    local next_room = limit - cost
    local in_next_window = 0
    if curr > 0 then in_next_window = math.max(0, size - math.floor((next_room * size) / curr)) end
    candidate = (w + 1) * size + math.min(size, in_next_window)
  end
  candidate = math.max(candidate, now + 1)
  while not sw_fits_at(state, candidate, limit, size, cost) do candidate = candidate + 1 end
  while candidate - 1 > now and sw_fits_at(state, candidate - 1, limit, size, cost) do
    candidate = candidate - 1
  end
  return candidate
end

local function sw_until_empty(prev, curr, w, now, size)
  if curr > 0 then return (w + 2) * size - now end
  if prev > 0 then return (w + 1) * size - now end
  return 0
end

ALGORITHMS.sw = function(keys, now, p, cost)
  local t = math.floor(now)
  local size = p.window
  local w = math.floor(t / size)
  local elapsed = t - w * size
  local state = read_numbers(keys[1])
  local prev, curr = sw_counts(state, w)
  local function remaining_after(c)
    return math.max(0, math.floor((p.limit * size - prev * (size - elapsed) - c * size) / size))
  end
  if cost > p.limit or not sw_fits(prev, curr, elapsed, p.limit, size, cost) then
    local retry = NEVER
    if cost <= p.limit then retry = sw_earliest_fit(state, t, p.limit, size, cost) - t end
    return {
      allowed = false, limit = p.limit, remaining = remaining_after(curr),
      reset = sw_until_empty(prev, curr, w, t, size), retry = retry,
    }
  end
  local counted = curr + cost
  local reset = sw_until_empty(prev, counted, w, t, size)
  return {
    allowed = true, limit = p.limit, remaining = remaining_after(counted), reset = reset, retry = 0,
    commit = function() write_numbers(keys[1], {w, prev, counted}, reset) end,
  }
end
`,
};

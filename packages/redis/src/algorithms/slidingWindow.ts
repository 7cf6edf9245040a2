import { chargeExtra, refundSharedLua } from './refund.js';
import { storedLua } from './stored.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/** The reading of a sliding_window key, shared by the algorithm and its refund. */
const slidingWindowSharedLua = `
${storedLua}
-- The stored state travels as three numbers (sw, sp, sc; sw nil when there is none), never a table.
local function sw_counts(sw, sp, sc, w)
  if sw == nil or sw < w - 1 then return 0, 0 end
  if sw == w - 1 then return sc, 0 end
  return sp, sc
end

local function sw_until_empty(prev, curr, w, now, size)
  if curr > 0 then return (w + 2) * size - now end
  if prev > 0 then return (w + 1) * size - now end
  return 0
end

-- The stored state as read at window index w (core's usable): none unless its window index is whole and at
-- most one window ahead (a clock that stepped back by less than a window) and its counts are finite.
local function sw_read(key, w)
  local sw, sp, sc = read3(key)
  if not (finite(sw) and sw == math.floor(sw) and sw <= w + 1) then return nil end
  if not (finite(sp) and finite(sc)) then return nil end
  return sw, math.max(0, sp), math.max(0, sc)
end
`;

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
${slidingWindowSharedLua}
-- sliding_window
-- KEYS[k]: string "<window index> <prev count> <curr count>"
-- limit:   requests per window
-- window:  window length, ms
-- cost:    units this request takes
local function sw_fits(prev, curr, elapsed, limit, size, cost)
  return prev * (size - elapsed) + (curr + cost) * size <= limit * size
end

local function sw_fits_at(sw, sp, sc, t, limit, size, cost)
  local w = math.floor(t / size)
  local prev, curr = sw_counts(sw, sp, sc, w)
  return sw_fits(prev, curr, t - w * size, limit, size, cost)
end

local function sw_earliest_fit(sw, sp, sc, now, limit, size, cost)
  local w = math.floor(now / size)
  local prev, curr = sw_counts(sw, sp, sc, w)
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
  while not sw_fits_at(sw, sp, sc, candidate, limit, size, cost) do candidate = candidate + 1 end
  while candidate - 1 > now and sw_fits_at(sw, sp, sc, candidate - 1, limit, size, cost) do
    candidate = candidate - 1
  end
  return candidate
end

local function sw_remaining(limit, size, prev, elapsed, counted)
  return math.max(0, math.floor((limit * size - prev * (size - elapsed) - counted * size) / size))
end

ALGORITHMS.sw = function(k, clock, limit, size, burst, cost)
  local sw, sp, sc = sw_read(KEYS[k], math.floor(clock / size))
  -- A state one window ahead counts in full: decide as at the start of its window.
  local t = clock
  if sw ~= nil and sw * size > clock then t = sw * size end
  local w = math.floor(t / size)
  local elapsed = t - w * size
  local prev, curr = sw_counts(sw, sp, sc, w)
  if cost > limit or not sw_fits(prev, curr, elapsed, limit, size, cost) then
    local retry = NEVER
    if cost <= limit then retry = sw_earliest_fit(sw, sp, sc, t, limit, size, cost) - t end
    return false, limit, sw_remaining(limit, size, prev, elapsed, curr), sw_until_empty(prev, curr, w, t, size), retry
  end
  local counted = curr + cost
  local reset = sw_until_empty(prev, counted, w, t, size)
  local remaining = sw_remaining(limit, size, prev, elapsed, counted)
  -- A key that already counts in window w ends, as the new state does, two windows after w starts: its TTL
  -- stays (the last value, keep). Not for a state ahead of this clock: its TTL was set by a clock ahead.
  local keep = sw == w and sc > 0 and counted > 0 and t == clock
  return true, limit, remaining, reset, 0, nil, 3, w, prev, counted, reset + t - clock, keep
end
`,
};

/** sliding_window's refund (core's slidingWindow.refund): only while the charge's window is the current one. */
export const slidingWindowRefundLua: LuaAlgorithm = {
  name: 'sliding_window',
  code: 'swr',
  keys: ['sw'],
  extra: (check) => chargeExtra(check),
  lua: `
${slidingWindowSharedLua}
${refundSharedLua}
-- sliding_window refund
-- KEYS[k]: the sliding_window key of the rule and tag
-- window:  window length, ms
-- cost:    units to give back
-- extra:   the charge (see charge_of)
ALGORITHMS.swr = function(k, now, limit, size, burst, cost, extra)
  local at = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  local w = math.floor(math.floor(at) / size)
  local sw, sp, sc = sw_read(KEYS[k], w)
  if sw ~= w or math.floor(now / size) ~= w then return false, limit, 0, 0, 0 end
  local prev, curr = sw_counts(sw, sp, sc, w)
  if curr <= 0 then return false, limit, 0, 0, 0 end
  local counted = math.max(0, curr - cost)
  local reset = sw_until_empty(prev, counted, w, now, size)
  return true, limit, 0, reset, 0, nil, 3, w, prev, counted, reset
end
`,
};

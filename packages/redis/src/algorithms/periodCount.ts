import { storedLua } from './stored.js';

/**
 * Lua port of core's periodCount.ts, shared by fixed_window and quota: units counted in the period
 * [start, finish) that holds `now`, stored as the string "<start> <count>" (KEYS[k]). Both fragments start with
 * it (the script defines a fragment only when a call uses it).
 */
export const periodCountLua = `
${storedLua}
-- Whether a stored period start lies in the period right after [start, finish): the clock stepped back by
-- less than a period since it was written (core's isNextPeriod). That count still holds; the caller decides
-- as at its start. A start further ahead, or not a whole ms, is stale or corrupt.
local function is_next_period(stored_start, start, finish)
  if stored_start == nil or stored_start ~= math.floor(stored_start) then return false end
  return stored_start > start and stored_start <= finish
end

-- count_in_period(now, start, finish, limit, cost, stored_start, stored, lead): an algorithm's return
-- values (see types.ts)
-- now:          ms (whole), or the start of the period ahead (see is_next_period)
-- start:        period start, ms
-- finish:       period end (exclusive), ms
-- limit:        units per period
-- cost:         units this request takes
-- stored_start: the key's period start (nil if none), stored: its count
-- lead:         how far now lies ahead of the clock: the state is kept that much longer
local function count_in_period(now, start, finish, limit, cost, stored_start, stored, lead)
  local count = 0
  if stored_start == start then count = stored_count(stored) end
  local reset = finish - now
  if cost > limit or count + cost > limit then
    local retry = NEVER
    if cost <= limit then retry = reset end
    return false, limit, math.max(0, limit - count), reset, retry
  end
  local counted = count + cost
  -- A key that already counts this period ends with it: its TTL stays (the last value, keep; see remember in
  -- script.ts). Not for a period ahead of this clock (lead > 0): its TTL was set by a clock ahead.
  local keep = stored_start == start and lead == 0
  return true, limit, math.max(0, limit - counted), reset, 0, nil, 2, start, counted, reset + lead, keep
end
`;

/**
 * Lua port of core's refundInPeriod (fixed_window and quota refunds): the charge comes off the count only
 * while the key still counts period [start, finish) and now lies before its end; never below 0.
 */
export const periodRefundLua = `
${storedLua}
local function refund_in_period(k, now, start, finish, cost)
  local stored_start, stored = read2(KEYS[k])
  local count = stored_count(stored)
  if stored_start ~= start or now >= finish or count <= 0 then return false, 0, 0, 0, 0 end
  return true, 0, 0, finish - now, 0, nil, 2, start, math.max(0, count - cost), finish - now
end
`;

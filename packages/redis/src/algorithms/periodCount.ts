/**
 * Lua port of core's periodCount.ts, shared by fixed_window and quota: units counted in the period
 * [start, finish) that holds `now`, stored as the string "<start> <count>". Both fragments start with
 * it (the script defines a fragment only when a call uses it).
 */
export const periodCountLua = `
-- count_in_period(k, now, start, finish, limit, cost): an algorithm's return values (see types.ts)
-- KEYS[k]: string "<period start> <count>"
-- now:     ms (whole)
-- start:   period start, ms
-- finish:  period end (exclusive), ms
-- limit:   units per period
-- cost:    units this request takes
local function count_in_period(k, now, start, finish, limit, cost)
  local count = 0
  local stored_start, stored_count = read2(KEYS[k])
  if stored_start == start then count = stored_count end
  local reset = finish - now
  if cost > limit or count + cost > limit then
    local retry = NEVER
    if cost <= limit then retry = reset end
    return false, limit, math.max(0, limit - count), reset, retry
  end
  local counted = count + cost
  return true, limit, math.max(0, limit - counted), reset, 0, nil, 2, start, counted, reset
end
`;

/**
 * Lua port of core's periodCount.ts, shared by fixed_window and quota: units counted in the period
 * [start, finish) that holds `now`, stored as the string "<start> <count>".
 */
export const periodCountLua = `
-- count_in_period(key, now, start, finish, limit, cost)
-- key:    string "<period start> <count>"
-- now:    ms (whole)
-- start:  period start, ms
-- finish: period end (exclusive), ms
-- limit:  units per period
-- cost:   units this request takes
local function count_in_period(key, now, start, finish, limit, cost)
  local state = read_numbers(key)
  local count = 0
  if state and state[1] == start then count = state[2] end
  local reset = finish - now
  local fits = cost <= limit
  if (not fits) or count + cost > limit then
    local retry = NEVER
    if fits then retry = reset end
    return {allowed = false, limit = limit, remaining = math.max(0, limit - count), reset = reset, retry = retry}
  end
  local counted = count + cost
  return {
    allowed = true, limit = limit, remaining = math.max(0, limit - counted), reset = reset, retry = 0,
    commit = function() write_numbers(key, {start, counted}, reset) end,
  }
end
`;

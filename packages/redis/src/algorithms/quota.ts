import { periodCountLua, periodRefundLua } from './periodCount.js';
import { chargeExtra, refundSharedLua } from './refund.js';
import type { LuaAlgorithm } from './types.js';

/** Lua port of core quota.ts's calendar arithmetic: the UTC period [start, finish) holding a time. */
const quotaPeriodLua = `
local DAY_MS = 86400000

local function days_from_civil(year, month, day)
  local y = year
  if month <= 2 then y = year - 1 end
  local era = math.floor(y / 400)
  local year_of_era = y - era * 400
  local shifted = month + 9
  if month > 2 then shifted = month - 3 end
  local day_of_year = math.floor((153 * shifted + 2) / 5) + day - 1
  local day_of_era = year_of_era * 365 + math.floor(year_of_era / 4) - math.floor(year_of_era / 100) + day_of_year
  return era * 146097 + day_of_era - 719468
end

local function civil_from_days(days)
  local z = days + 719468
  local era = math.floor(z / 146097)
  local day_of_era = z - era * 146097
  local year_of_era = math.floor(
    (day_of_era - math.floor(day_of_era / 1460) + math.floor(day_of_era / 36524) - math.floor(day_of_era / 146096))
    / 365)
  local day_of_year = day_of_era - (365 * year_of_era + math.floor(year_of_era / 4) - math.floor(year_of_era / 100))
  local shifted_month = math.floor((5 * day_of_year + 2) / 153)
  local month = shifted_month - 9
  if shifted_month < 10 then month = shifted_month + 3 end
  local year = year_of_era + era * 400
  if month <= 2 then year = year + 1 end
  return year, month
end

local function quota_period(period, window, now)
  if period == '' then
    local start = math.floor(now / window) * window
    return start, start + window
  end
  local day = math.floor(now / DAY_MS)
  if period == 'day' then return day * DAY_MS, (day + 1) * DAY_MS end
  if period == 'week' then
    local monday = day - math.fmod(math.fmod(day + 3, 7) + 7, 7)
    return monday * DAY_MS, (monday + 7) * DAY_MS
  end
  local year, month = civil_from_days(day)
  local first = days_from_civil(year, month, 1)
  local following
  if month == 12 then following = days_from_civil(year + 1, 1, 1) else following = days_from_civil(year, month + 1, 1) end
  return first * DAY_MS, following * DAY_MS
end
`;

/**
 * quota in Lua: core's quota.ts. A count per UTC calendar day, ISO week or month (H. Hinnant's civil
 * date arithmetic, integers only, as in core), or per epoch-aligned window when no period is given.
 */
export const quotaLua: LuaAlgorithm = {
  name: 'quota',
  code: 'qt',
  keys: ['qt'],
  extra: (check) => check.params.period ?? '',
  lua: `
${periodCountLua}
-- quota
-- KEYS[k]: string "<period start> <count>"
-- limit:   units per period
-- window:  period length, ms, when extra is ''
-- cost:    units this request takes
-- extra:   calendar period: 'day' | 'week' | 'month' (UTC), or ''
${quotaPeriodLua}
ALGORITHMS.qt = function(k, now, limit, window, burst, cost, period)
  local stored_start, stored = read2(KEYS[k])
  local start, finish = quota_period(period, window, now)
  if not is_next_period(stored_start, start, finish) then
    return count_in_period(now, start, finish, limit, cost, stored_start, stored, 0)
  end
  local ahead_start, ahead_finish = quota_period(period, window, stored_start)
  return count_in_period(stored_start, ahead_start, ahead_finish, limit, cost, stored_start, stored, stored_start - now)
end
`,
};

/** quota's refund (core's quota.refund): only into the period the charge was counted in. */
export const quotaRefundLua: LuaAlgorithm = {
  name: 'quota',
  code: 'qtr',
  keys: ['qt'],
  extra: (check) => chargeExtra(check, check.params.period ?? ''),
  lua: `
${periodRefundLua}
${refundSharedLua}
${quotaPeriodLua}
-- quota refund
-- KEYS[k]: the quota key of the rule and tag
-- window:  period length, ms, when the charge names no calendar period
-- cost:    units to give back
-- extra:   the charge (see charge_of), then the calendar period or ''
ALGORITHMS.qtr = function(k, now, limit, window, burst, cost, extra)
  local at, _, period = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  local start, finish = quota_period(period, window, math.floor(at))
  return refund_in_period(k, now, start, finish, cost)
end
`,
};

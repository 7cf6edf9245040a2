import { chargeExtra, refundSharedLua } from './refund.js';
import { storedLua } from './stored.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * Lua port of core debt.ts's helpers, shared with leaky_bucket: the TAT is stored as "<whole ms> <sub>",
 * the sub-millisecond part an integer count of 1/limit ms. Each fragment that needs them starts with
 * them (the script defines a fragment only when a call uses it).
 */
export const gcraSharedLua = `
${storedLua}
-- gcra helpers; limit > 0 whenever a debt exists (a rule with no rate has no tolerance)
local function gcra_tolerance(limit, window, burst)
  if limit > 0 then return burst * window end
  return 0
end

-- A finite stored number at or past 2^53: no clock's time, a debt past any limit (core's pastAnyClock).
local function past_any_clock(x)
  return finite(x) and x >= 9007199254740992
end

-- What KEYS[k] still owes at now, in 1/limit ms, at most the tolerance (core's debtAt): a TAT up to one
-- tolerance further ahead (a clock that stepped back) reads as the tolerance, and so does one whose numbers
-- lie past 2^53; one further ahead still (a clock a year ahead), or not a number, as no debt.
local function gcra_debt(k, now, limit, tolerance)
  local whole, sub = read2(KEYS[k])
  if not finite(whole) or sub == nil or whole < now then return 0 end
  local debt = (whole - now) * limit + sub
  if debt <= tolerance then return math.max(0, debt) end
  if debt <= 2 * tolerance then return tolerance end
  if debt > 2 * tolerance and (past_any_clock(whole) or past_any_clock(sub)) then return tolerance end
  return 0
end

local function gcra_ms(debt, limit)
  if limit > 0 then return math.ceil(debt / limit) end
  return 0
end

-- The two stored numbers for a debt at now: TAT whole ms, and the rest in 1/limit ms.
local function gcra_state(now, debt, limit)
  local whole = 0
  if limit > 0 then whole = math.floor(debt / limit) end
  return now + whole, debt - whole * limit
end
`;

/** gcra in Lua: core's gcra.ts, one stored theoretical arrival time per key. */
export const gcraLua: LuaAlgorithm = {
  name: 'gcra',
  code: 'gc',
  keys: ['gc'],
  extra: noExtra,
  lua: `
${gcraSharedLua}
-- gcra
-- KEYS[k]: string "<TAT whole ms> <TAT sub-ms, in 1/limit ms>"
-- limit:   requests per window (emission interval = window / limit)
-- window:  window, ms
-- burst:   tolerance, requests
-- cost:    units this request takes
ALGORITHMS.gc = function(k, t, limit, window, burst, cost)
  local tolerance = gcra_tolerance(limit, window, burst)
  local debt = gcra_debt(k, t, limit, tolerance)
  local added = cost * window
  if added > tolerance or debt + added > tolerance then
    local retry = NEVER
    if added <= tolerance then retry = gcra_ms(debt + added - tolerance, limit) end
    return false, limit, math.floor((tolerance - debt) / window), gcra_ms(debt, limit), retry
  end
  local owed = debt + added
  local reset = gcra_ms(owed, limit)
  local whole, sub = gcra_state(t, owed, limit)
  return true, limit, math.floor((tolerance - owed) / window), reset, 0, nil, 2, whole, sub, reset
end
`,
};

/**
 * The refund of a bucket that keeps a gcra state (gcra, leaky_bucket; core's refundDebt): what is left of a
 * charge comes off the debt, never below none; false (nothing written) when nothing is owed or left of it.
 */
export function debtRefundLua(name: 'gcra' | 'leaky_bucket', code: string, key: string): LuaAlgorithm {
  return {
    name,
    code,
    keys: [key],
    extra: (check) => chargeExtra(check),
    lua: `
${gcraSharedLua}
${refundSharedLua}
-- ${name} refund
-- KEYS[k]: the ${name} key of the rule and tag
-- limit, window, burst: the rule's, as for ${name}
-- cost:    units to give back
-- extra:   the charge (see charge_of), '' for a leaky_bucket place: all of it
ALGORITHMS.${code} = function(k, t, limit, window, burst, cost, extra)
  local debt = gcra_debt(k, t, limit, gcra_tolerance(limit, window, burst))
  local at, reset = charge_of(extra)
  local given = undrained(cost, window, limit, t, at, reset)
  if not (debt > 0 and given > 0) then return false, limit, 0, 0, 0 end
  local owed = math.max(0, debt - given)
  local reset_ms = gcra_ms(owed, limit)
  local whole, sub = gcra_state(t, owed, limit)
  return true, limit, 0, reset_ms, 0, nil, 2, whole, sub, reset_ms
end
`,
  };
}

/** gcra's refund (core's gcra.refund). */
export const gcraRefundLua = debtRefundLua('gcra', 'gcr', 'gc');

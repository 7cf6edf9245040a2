import { nextPeriodLua, periodRefundLua } from './periodCount.js';
import { chargeExtra, refundSharedLua } from './refund.js';
import { storedLua } from './stored.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * fixed_window's counters: one integer key per window, named from the rule's key (KEYS[k]) and the window start,
 * so that a request costs Redis an INCRBY (no text to parse or format; the TTL, set when the key is made, stays).
 * The name is made in the script (the window may come from Redis TIME); it keeps the rule key's hash tag, so it
 * lives in the same Cluster slot. The rule's key holds the previous version's state, "<start> <count>": read
 * when a window has no counter yet (a rolling deploy carries its count over), and by refunds of charges it
 * counted.
 */
const windowCounterLua = `
-- The counter key of the window starting at start: whole ms below 1e14 as digits (what '..' writes for them),
-- others exact: the names FAILURE's unreadable deletes. The checks of a call mostly share a window: its text (and
-- the next window's) is made once (a number written as text costs more than the rest of the name).
local suffix_start, suffix, next_suffix = nil, nil, nil
local function window_text(start)
  if start % 1 == 0 and start < 1e14 and start > -1e14 then return ':' .. start end
  return ':' .. fmt(start)
end
local function window_key(k, start)
  if start ~= suffix_start then suffix_start, suffix, next_suffix = start, window_text(start), nil end
  return KEYS[k] .. suffix
end
-- The counter key of the window after the one window_key last named (start).
local function next_window_key(k, start, window)
  if next_suffix == nil then next_suffix = window_text(start + window) end
  return KEYS[k] .. next_suffix
end

-- A counter's value read from Redis: its count, and the same count when INCRBY can add to it (false: the key is
-- set anew when written: a negative, fractional or unreadable value counts as core's stored counts do).
local function counter_of(raw)
  local n = tonumber(raw)
  local count = stored_count(n)
  if count == n then return count, count end
  return count, false
end

-- A counter's count (one this call wrote: from its states, see remember) and what Redis holds (see counter_of);
-- nil when there is none.
local function count_at(key)
  local s = state_at[key]
  if s then return states[s + 2], states[s + 3] end
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local n = tonumber(raw)
  if n ~= nil and n >= 0 and n % 1 == 0 then return n, n end
  return counter_of(raw)
end
`;

/** fixed_window in Lua: core's fixedWindow.ts, one counter per epoch-aligned window. */
export const fixedWindowLua: LuaAlgorithm = {
  name: 'fixed_window',
  code: 'fw',
  keys: ['fw'],
  extra: noExtra,
  counter: true,
  lua: `
${storedLua}
${nextPeriodLua}
${windowCounterLua}
-- fixed_window
-- KEYS[k]: the rule's key (see window_key); the previous version's "<window start> <count>"
-- limit:   requests per window
-- window:  window length, ms
-- cost:    units this request takes

-- No counter for the window that holds now: the next window's counter when there is one (the clock stepped back
-- by less than a window since it was made: its count still holds, decided as at its start, core's isNextPeriod),
-- else the previous version's state. The window to count in: start, the time to decide at, the counter's key, its
-- count and what Redis holds (see counter_of).
local function fw_no_counter(k, now, window, start)
  local ahead = next_window_key(k, start, window)
  local s = state_at[ahead]
  if s then return start + window, start + window, ahead, states[s + 2], states[s + 3] end
  local both = redis.call('MGET', ahead, KEYS[k])
  if both[1] then return start + window, start + window, ahead, counter_of(both[1]) end
  local stored_start, stored = nil, nil
  if both[2] then
    local a, b = string.match(both[2], '^([^ ]+) ([^ ]+)')
    stored_start, stored = tonumber(a), tonumber(b)
  end
  local at = now
  if is_next_period(stored_start, start, start + window) then
    at = stored_start
    start = math.floor(at / window) * window
  end
  if stored_start == start then return start, at, window_key(k, start), stored_count(stored), false end
  return start, at, window_key(k, start), 0, false
end

-- Allowed, it writes the window's counter (kind 1): its key, its count, the count Redis holds (false: none
-- INCRBY adds to), its TTL. A counter this call already wrote is read from the call's states (see remember).
ALGORITHMS.fw = function(k, now, limit, window, burst, cost)
  local start = math.floor(now / window) * window
  local at, key = now, window_key(k, start)
  local count, base = count_at(key)
  if count == nil then start, at, key, count, base = fw_no_counter(k, now, window, start) end
  local reset = start + window - at
  -- Denied: the wait is the window's end, or never for a cost above the limit (core's countInPeriod).
  if count + cost > limit or cost > limit then
    return false, limit, math.max(0, limit - count), reset, cost <= limit and reset or NEVER
  end
  local counted = count + cost
  return true, limit, math.max(0, limit - counted), reset, 0, nil, 1, key, counted, base, start + window - now
end
`,
};

/** fixed_window's refund (core's fixedWindow.refund): only into the window the charge was counted in. */
export const fixedWindowRefundLua: LuaAlgorithm = {
  name: 'fixed_window',
  code: 'fwr',
  keys: ['fw'],
  extra: (check) => chargeExtra(check),
  lua: `
${periodRefundLua}
${refundSharedLua}
${windowCounterLua}
-- fixed_window refund
-- KEYS[k]: the fixed_window key of the rule and tag
-- window:  window length, ms
-- cost:    units to give back
-- extra:   the charge (see charge_of)
-- Off the counter of the charge's window, never below 0, only while that window runs; a charge the previous
-- version counted (no counter for its window) comes off its state.
ALGORITHMS.fwr = function(k, now, limit, window, burst, cost, extra)
  local at = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  local start = math.floor(math.floor(at) / window) * window
  local finish = start + window
  local count, base = count_at(window_key(k, start))
  if count == nil then return refund_in_period(k, now, start, finish, cost) end
  if now >= finish or count <= 0 then return false, 0, 0, 0, 0 end
  return true, 0, 0, finish - now, 0, nil, 1, window_key(k, start), math.max(0, count - cost), base, finish - now
end
`,
};

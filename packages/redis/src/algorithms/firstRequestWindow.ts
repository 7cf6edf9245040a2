import { periodCountLua, periodRefundLua } from './periodCount.js';
import { chargeExtra, refundSharedLua } from './refund.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/**
 * Whether a stored window start opens the window the request falls in (start <= now < start + window), or one
 * at most a window ahead of the clock (it stepped back): core's firstRequestWindow.ts. A start that is not a
 * whole ms is corrupt.
 */
const openWindowLua = `
local function open_window(stored_start, now, window)
  if stored_start == nil or stored_start ~= math.floor(stored_start) then return nil end
  if stored_start <= now and now < stored_start + window then return stored_start end
  if stored_start > now and stored_start <= now + window then return stored_start end
  return nil
end
`;

/** first_request_window in Lua: core's firstRequestWindow.ts, a window per key from its first request. */
export const firstRequestWindowLua: LuaAlgorithm = {
  name: 'first_request_window',
  code: 'frw',
  keys: ['frw'],
  extra: noExtra,
  lua: `
${periodCountLua}
${openWindowLua}
-- first_request_window
-- KEYS[k]: string "<window start> <count>", the start the key's first request in it
-- limit:   requests per window
-- window:  window length, ms
-- cost:    units this request takes
ALGORITHMS.frw = function(k, now, limit, window, burst, cost)
  local stored_start, stored = read2(KEYS[k])
  local start = open_window(stored_start, now, window) or now
  local at = math.max(now, start)
  return count_in_period(at, start, start + window, limit, cost, stored_start, stored, at - now)
end
`,
};

/** first_request_window's refund (core's firstRequestWindow.refund): only into the window of the charge. */
export const firstRequestWindowRefundLua: LuaAlgorithm = {
  name: 'first_request_window',
  code: 'frwr',
  keys: ['frw'],
  extra: (check) => chargeExtra(check),
  lua: `
${periodRefundLua}
${refundSharedLua}
-- first_request_window refund
-- KEYS[k]: the first_request_window key of the rule and tag
-- window:  window length, ms
-- cost:    units to give back
-- extra:   the charge (see charge_of)
ALGORITHMS.frwr = function(k, now, limit, window, burst, cost, extra)
  local at = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  at = math.floor(at)
  local start = read2(KEYS[k])
  if start == nil or start ~= math.floor(start) or at < start or at >= start + window then
    return false, 0, 0, 0, 0
  end
  return refund_in_period(k, now, start, start + window, cost)
end
`,
};

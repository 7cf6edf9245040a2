import { periodCountLua, periodRefundLua } from './periodCount.js';
import { chargeExtra, refundSharedLua } from './refund.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/** fixed_window in Lua: core's fixedWindow.ts, one counter per epoch-aligned window. */
export const fixedWindowLua: LuaAlgorithm = {
  name: 'fixed_window',
  code: 'fw',
  keys: ['fw'],
  extra: noExtra,
  lua: `
${periodCountLua}
-- fixed_window
-- KEYS[k]: string "<window start> <count>"
-- limit:   requests per window
-- window:  window length, ms
-- cost:    units this request takes
ALGORITHMS.fw = function(k, now, limit, window, burst, cost)
  local stored_start, stored = read2(KEYS[k])
  local current = math.floor(now / window) * window
  local at = now
  if is_next_period(stored_start, current, current + window) then at = stored_start end
  local start = math.floor(at / window) * window
  return count_in_period(at, start, start + window, limit, cost, stored_start, stored, at - now)
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
-- fixed_window refund
-- KEYS[k]: the fixed_window key of the rule and tag
-- window:  window length, ms
-- cost:    units to give back
-- extra:   the charge (see charge_of)
ALGORITHMS.fwr = function(k, now, limit, window, burst, cost, extra)
  local at = charge_of(extra)
  if at == nil then return false, limit, 0, 0, 0 end
  local start = math.floor(math.floor(at) / window) * window
  return refund_in_period(k, now, start, start + window, cost)
end
`,
};

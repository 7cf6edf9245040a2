import { type LuaAlgorithm, noExtra } from './types.js';

/** fixed_window in Lua: core's fixedWindow.ts, one counter per epoch-aligned window. */
export const fixedWindowLua: LuaAlgorithm = {
  name: 'fixed_window',
  code: 'fw',
  keys: ['fw'],
  extra: noExtra,
  lua: `
-- fixed_window
-- keys[1]:  string "<window start> <count>"
-- p.limit:  requests per window
-- p.window: window length, ms
-- cost:     units this request takes
ALGORITHMS.fw = function(keys, now, p, cost)
  local t = math.floor(now)
  local start = math.floor(t / p.window) * p.window
  return count_in_period(keys[1], t, start, start + p.window, p.limit, cost)
end
`,
};

import { type LuaAlgorithm, noExtra } from './types.js';

/** leaky_bucket in Lua: core's leakyBucket.ts, the gcra queue with a delay instead of a refusal. */
export const leakyBucketLua: LuaAlgorithm = {
  name: 'leaky_bucket',
  code: 'lb',
  keys: ['lb'],
  extra: noExtra,
  lua: `
-- leaky_bucket
-- keys[1]:  string "<drain time whole ms> <sub-ms, in 1/limit ms>"
-- p.limit:  requests leaving per window
-- p.window: window, ms
-- p.burst:  queue capacity, requests
-- cost:     units this request takes
ALGORITHMS.lb = function(keys, now, p, cost)
  local t = math.floor(now)
  local capacity = gcra_tolerance(p)
  local queued = gcra_debt(read_numbers(keys[1]), t, p)
  local added = cost * p.window
  if added > capacity or queued + added > capacity then
    local retry = NEVER
    if added <= capacity then retry = gcra_ms(queued + added - capacity, p) end
    return {
      allowed = false, limit = p.limit, remaining = math.floor((capacity - queued) / p.window),
      reset = gcra_ms(queued, p), retry = retry, delay = 0,
    }
  end
  local owed = queued + added
  local reset = gcra_ms(owed, p)
  return {
    allowed = true, limit = p.limit, remaining = math.floor((capacity - owed) / p.window), reset = reset,
    retry = 0, delay = gcra_ms(queued, p), commit = function() gcra_write(keys[1], t, owed, p, reset) end,
  }
end
`,
};

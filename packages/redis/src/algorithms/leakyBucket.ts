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

/**
 * Not an algorithm of its own: gives a leaky_bucket queue place back (core's refundLeaky), for a request
 * given up while it waited. Runs in the evaluation script as a check that always commits.
 */
export const leakyRefundLua: LuaAlgorithm = {
  name: 'leaky_bucket',
  code: 'lr',
  keys: ['lb'],
  extra: noExtra,
  lua: `
-- leaky_bucket refund
-- keys[1]:  the leaky_bucket key of the rule and tag
-- p:        the rule's limit, window and burst, as for leaky_bucket
-- cost:     units to give back
ALGORITHMS.lr = function(keys, now, p, cost)
  local t = math.floor(now)
  local owed = math.max(0, gcra_debt(read_numbers(keys[1]), t, p) - cost * p.window)
  local reset = gcra_ms(owed, p)
  return {
    allowed = true, limit = p.limit, remaining = 0, reset = reset, retry = 0,
    commit = function() gcra_write(keys[1], t, owed, p, reset) end,
  }
end
`,
};

import { debtRefundLua, gcraSharedLua } from './gcra.js';
import { type LuaAlgorithm, noExtra } from './types.js';

/** leaky_bucket in Lua: core's leakyBucket.ts, the gcra queue with a delay instead of a refusal. */
export const leakyBucketLua: LuaAlgorithm = {
  name: 'leaky_bucket',
  code: 'lb',
  keys: ['lb'],
  extra: noExtra,
  lua: `
${gcraSharedLua}
-- leaky_bucket
-- KEYS[k]: string "<drain time whole ms> <sub-ms, in 1/limit ms>"
-- limit:   requests leaving per window
-- window:  window, ms
-- burst:   queue capacity, requests
-- cost:    units this request takes
ALGORITHMS.lb = function(k, t, limit, window, burst, cost)
  local capacity = gcra_tolerance(limit, window, burst)
  local queued = gcra_debt(k, t, limit, capacity)
  local added = cost * window
  if added > capacity or queued + added > capacity then
    local retry = NEVER
    if added <= capacity then retry = gcra_ms(queued + added - capacity, limit) end
    return false, limit, math.floor((capacity - queued) / window), gcra_ms(queued, limit), retry, 0
  end
  local owed = queued + added
  local reset = gcra_ms(owed, limit)
  local whole, sub = gcra_state(t, owed, limit)
  return true, limit, math.floor((capacity - owed) / window), reset, 0, gcra_ms(queued, limit), 2, whole, sub, reset
end
`,
};

/**
 * leaky_bucket's refund (core's leakyBucket.refund): a queue place given back for a request given up while
 * it waited (its extra is '': all of it), or a charge the rule's `count` does not keep.
 */
export const leakyRefundLua = debtRefundLua('leaky_bucket', 'lr', 'lb');

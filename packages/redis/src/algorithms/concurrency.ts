import type { LuaAlgorithm } from './types.js';

/**
 * concurrency in Lua: core's concurrency.ts. Leases live in a sorted set scored by expiry (member = lease
 * id), so a crashed holder's lease simply stops counting; a lease costing other than 1 unit keeps its
 * cost in a companion hash. Release is ZREM + HDEL, idempotent.
 */
export const concurrencyLua: LuaAlgorithm = {
  name: 'concurrency',
  code: 'cc',
  keys: ['cc', 'cc:w'],
  extra: (check) => check.leaseId ?? '',
  lua: `
-- concurrency
-- keys[1]:  sorted set, member = lease id, score = expiry (ms)
-- keys[2]:  hash, lease id -> cost, for leases whose cost is not 1
-- p.limit:  units leased at once
-- p.window: lease duration, ms
-- p.extra:  this request's lease id (taking a held id renews it)
-- cost:     units this lease holds
local function cc_held(keys, now, except_id)
  local flat = redis.call('ZRANGEBYSCORE', keys[1], '(' .. fmt(now), '+inf', 'WITHSCORES')
  local weights = {}
  local stored = redis.call('HGETALL', keys[2])
  for i = 1, #stored, 2 do weights[stored[i]] = tonumber(stored[i + 1]) end
  local leases = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= except_id then
      leases[#leases + 1] = {expires = tonumber(flat[i + 1]), cost = weights[flat[i]] or 1}
    end
  end
  return leases
end

local function cc_until_all_expire(leases, now)
  local last = now
  for _, lease in ipairs(leases) do last = math.max(last, lease.expires) end
  return last - now
end

local function cc_wait_to_free(leases, excess, now)
  local freed = 0
  for _, lease in ipairs(leases) do
    freed = freed + lease.cost
    if freed >= excess then return lease.expires - now end
  end
  return 0
end

local function cc_commit(keys, now, id, expires, cost, reset)
  local expired = redis.call('ZRANGEBYSCORE', keys[1], '-inf', fmt(now))
  for _, old in ipairs(expired) do redis.call('HDEL', keys[2], old) end
  redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', fmt(now))
  redis.call('ZADD', keys[1], fmt(expires), id)
  if cost == 1 then redis.call('HDEL', keys[2], id) else redis.call('HSET', keys[2], id, fmt(cost)) end
  local ttl = math.ceil(reset) + MARGIN_MS
  redis.call('PEXPIRE', keys[1], ttl)
  redis.call('PEXPIRE', keys[2], ttl)
end

ALGORITHMS.cc = function(keys, now, p, cost)
  local t = math.floor(now)
  local others = cc_held(keys, t, p.extra)
  local in_use = 0
  for _, lease in ipairs(others) do in_use = in_use + lease.cost end
  if cost > p.limit or in_use + cost > p.limit then
    local retry = NEVER
    if cost <= p.limit then retry = cc_wait_to_free(others, in_use + cost - p.limit, t) end
    return {
      allowed = false, limit = p.limit, remaining = math.max(0, p.limit - in_use),
      reset = cc_until_all_expire(others, t), retry = retry,
    }
  end
  local expires = t + p.window
  local reset = math.max(cc_until_all_expire(others, t), expires - t)
  return {
    allowed = true, limit = p.limit, remaining = math.max(0, p.limit - in_use - cost), reset = reset, retry = 0,
    commit = function() cc_commit(keys, t, p.extra, expires, cost, reset) end,
  }
end
`,
};

/** Removes one lease (ZREM + HDEL); KEYS and ARGV come in pairs/ids per lease. Idempotent. */
export const releaseLua = `
-- KEYS[2i-1]: lease sorted set of lease i; KEYS[2i]: its cost hash
-- ARGV[i]:    lease id i
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[2 * i - 1], ARGV[i])
  redis.call('HDEL', KEYS[2 * i], ARGV[i])
end
return #ARGV
`;

import { storedLua } from './stored.js';
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
${storedLua}
-- concurrency
-- KEYS[k]:     sorted set, member = lease id, score = expiry (ms)
-- KEYS[k + 1]: hash, lease id -> cost, for leases whose cost is not 1
-- limit:       units leased at once
-- window:      lease duration, ms
-- cost:        units this lease holds
-- extra:       this request's lease id (taking a held id renews it)
-- Leases held at now, earliest expiry first, except except_id, and whether any lease lies too far ahead to
-- count. A lease expires at most window after now, or up to twice that after a clock step back; one
-- expiring later still is stale or corrupt (core's held).
local function cc_held(k, now, window, except_id)
  local flat = redis.call('ZRANGEBYSCORE', KEYS[k], '(' .. fmt(now), '+inf', 'WITHSCORES')
  local weights = {}
  local stored = redis.call('HGETALL', KEYS[k + 1])
  for i = 1, #stored, 2 do weights[stored[i]] = tonumber(stored[i + 1]) end
  local leases = {}
  local far = false
  for i = 1, #flat, 2 do
    local expires = tonumber(flat[i + 1])
    if expires - now > 2 * window then
      far = true
    elseif flat[i] ~= except_id then
      leases[#leases + 1] = {expires = expires, cost = stored_count(weights[flat[i]] or 1)}
    end
  end
  return leases, far
end

-- Time until every lease has expired (whole ms), each expiry capped at horizon.
local function cc_until_all_expire(leases, now, horizon)
  local last = now
  for _, lease in ipairs(leases) do last = math.max(last, math.min(math.ceil(lease.expires), horizon)) end
  return last - now
end

-- The wait until expiring leases free excess units, a lease held at most window more.
local function cc_wait_to_free(leases, excess, now, window)
  local freed = 0
  for _, lease in ipairs(leases) do
    freed = freed + lease.cost
    if freed >= excess then return math.min(math.ceil(lease.expires) - now, window) end
  end
  return 0
end

WRITERS.cc = function(k, now, id, expires, cost, keep)
  local set, weights = KEYS[k], KEYS[k + 1]
  local expired = redis.call('ZRANGEBYSCORE', set, '-inf', fmt(now))
  for _, old in ipairs(expired) do redis.call('HDEL', weights, old) end
  redis.call('ZREMRANGEBYSCORE', set, '-inf', fmt(now))
  redis.call('ZADD', set, fmt(expires), id)
  if cost == 1 then redis.call('HDEL', weights, id) else redis.call('HSET', weights, id, fmt(cost)) end
  local ttl = math.ceil(keep) + MARGIN_MS
  redis.call('PEXPIRE', set, ttl)
  redis.call('PEXPIRE', weights, ttl)
end

-- cc, after dropping the leases too far ahead to count (see cc_held); a cost left behind in the hash is
-- never read (an id taken again sets or clears its own).
WRITERS.cf = function(k, now, id, expires, cost, keep)
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '(' .. fmt(now + 2 * (expires - now)), '+inf')
  WRITERS.cc(k, now, id, expires, cost, keep)
end

ALGORITHMS.cc = function(k, t, limit, window, burst, cost, id)
  local others, far = cc_held(k, t, window, id)
  local in_use = 0
  for _, lease in ipairs(others) do in_use = in_use + lease.cost end
  if cost > limit or in_use + cost > limit then
    local retry = NEVER
    if cost <= limit then retry = cc_wait_to_free(others, in_use + cost - limit, t, window) end
    return false, limit, math.max(0, limit - in_use), cc_until_all_expire(others, t, t + window), retry
  end
  local expires = t + window
  local keep = math.max(cc_until_all_expire(others, t, math.huge), window)
  local writer = 'cc'
  if far then writer = 'cf' end
  return true, limit, math.max(0, limit - in_use - cost), window, 0, nil, writer, t, id, expires, cost, keep
end
`,
};

/**
 * concurrency's release (core's concurrency.releaseLease) as a check of the evaluation script, so that a
 * response's leases and refunds go back in one call: lease `extra` dropped (ZREM + HDEL), idempotent. Its keys
 * are read first, so that a key of the wrong type fails this check's group (and is removed) as in evaluation.
 */
export const concurrencyReleaseLua: LuaAlgorithm = {
  name: 'concurrency',
  code: 'ccr',
  keys: ['cc', 'cc:w'],
  extra: (check) => check.leaseId ?? '',
  lua: `
-- concurrency release
-- KEYS[k]:     the lease sorted set of the rule and tag
-- KEYS[k + 1]: its cost hash
-- extra:       the lease id to drop
WRITERS.ccr = function(k, id)
  redis.call('ZREM', KEYS[k], id)
  redis.call('HDEL', KEYS[k + 1], id)
end

ALGORITHMS.ccr = function(k, t, limit, window, burst, cost, id)
  redis.call('ZSCORE', KEYS[k], id)
  redis.call('HEXISTS', KEYS[k + 1], id)
  return true, limit, 0, 0, 0, nil, 'ccr', id
end
`,
};

/**
 * concurrency's renewal (core's concurrency.renewLease) as a check of the evaluation script: a long-lived
 * connection's heartbeat, every held lease of a process in one call. A lease still held is extended to
 * now + window (never shortened) and the keys' TTL with it; a lease released or expired is not brought back
 * (the check answers not allowed, in shadow mode: nothing else of the call is stopped).
 */
export const concurrencyRenewLua: LuaAlgorithm = {
  name: 'concurrency',
  code: 'ccn',
  keys: ['cc', 'cc:w'],
  extra: (check) => check.leaseId ?? '',
  lua: `
-- concurrency renewal
-- KEYS[k]:     the lease sorted set of the rule and tag
-- KEYS[k + 1]: its cost hash
-- window:      the lease's duration, ms
-- extra:       the lease id to extend
WRITERS.ccn = function(k, id, expires, keep)
  redis.call('ZADD', KEYS[k], fmt(expires), id)
  local ttl = math.ceil(keep) + MARGIN_MS
  if redis.call('PTTL', KEYS[k]) < ttl then
    redis.call('PEXPIRE', KEYS[k], ttl)
    redis.call('PEXPIRE', KEYS[k + 1], ttl)
  end
end

ALGORITHMS.ccn = function(k, t, limit, window, burst, cost, id)
  local score = redis.call('ZSCORE', KEYS[k], id)
  redis.call('HEXISTS', KEYS[k + 1], id)
  if not score or tonumber(score) <= t then return false, limit, 0, 0, 0 end
  local expires = math.max(tonumber(score), t + window)
  return true, limit, 0, 0, 0, nil, 'ccn', id, expires, expires - t
end
`,
};

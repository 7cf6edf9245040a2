import { releaseLua, scriptFragments, sharedLua } from './algorithms/index.js';

/** ARGV entries of each spec (algorithm, mode and limits shared by checks of one rule). */
export const ARGS_PER_SPEC = 5;
/** ARGV entries at the start of each group, before its checks. */
export const GROUP_ARGS = 2;
/** Values each check takes in ARGV after its group's header. */
export const ARGS_PER_CHECK = 3;
/** What the script sends back per check. */
export const RESULTS_PER_CHECK = 6;
/** The retry time the script returns for a request that can never fit (Infinity in TypeScript). */
export const NEVER = -1;

const PRELUDE = `
-- Sluice: the checks of one or more requests in ONE call. The checks of a request form a group; groups
-- run one after the other, as if the requests had come one by one. Per group, phase 1 decides every
-- check (reads only); phase 2 records the state of the allowed checks, only if no enforcing check of
-- that group denied. A denial in one group never stops another group.
-- ARGV: the specs, then the groups.
--   number of specs, then per spec, ${ARGS_PER_SPEC} values:
--     algorithm code ('fw', 'sw', ...)
--     '1' enforce | '0' shadow
--     limit
--     window, ms
--     burst
--   number of groups, then per group, ${GROUP_ARGS} values:
--     number of checks in the group
--     now, epoch ms; '' = take it from Redis TIME (read once per call)
--   and per check of the group, ${ARGS_PER_CHECK} values:
--     spec number (1-based)
--     cost
--     extra (lease id, calendar period, or '')
-- KEYS: per check, the keys its algorithm uses, in order.
-- The reply: ${RESULTS_PER_CHECK} values per check, in order: allowed (1/0), limit, remaining, reset, retry, delay ('' = none).
-- Everything per check travels as plain values (multiple returns, arrays reused by every group): no
-- table, no closure per check, so that a call of many checks allocates next to nothing.
local NEVER = ${NEVER}
local MARGIN_MS = 1000
local ALGORITHMS = {}
-- Writers of the algorithms whose state is not a string of numbers (sliding_log, concurrency).
local WRITERS = {}
-- Each algorithm's code is defined on first use in a call (LOADERS.<code>), not all eight on every call.
local LOADERS = {}

local function fmt(x)
  return string.format('%.17g', x)
end

-- A reply number: whole numbers go as integers (no text to format or parse), others as exact text.
local function num(x)
  if x == math.floor(x) and x > -9007199254740992 and x < 9007199254740992 then return x end
  return fmt(x)
end

-- State of the common algorithms: a string of two or three numbers, "<a> <b>" or "<a> <b> <c>".
-- Commits of this call are kept here by key (numbers, ttl) and each key is SET once when the call
-- ends: a hot key shared by many requests of the call costs one GET and one SET, not one per request.
-- The script is atomic, so nobody sees the difference.
local state_a, state_b, state_c, state_ttl = {}, {}, {}, {}
local dirty, dirty_count = {}, 0

local function remember(key, a, b, c, ttl)
  if state_ttl[key] == nil then
    dirty_count = dirty_count + 1
    dirty[dirty_count] = key
  end
  state_a[key], state_b[key], state_c[key], state_ttl[key] = a, b, c, ttl
end

-- Read with one match (no table); nil when the key does not exist.
local function read2(key)
  if state_ttl[key] then return state_a[key], state_b[key] end
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local a, b = string.match(raw, '^(%S+) (%S+)')
  return tonumber(a), tonumber(b)
end

local function read3(key)
  if state_ttl[key] then return state_a[key], state_b[key], state_c[key] end
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local a, b, c = string.match(raw, '^(%S+) (%S+) (%S+)')
  return tonumber(a), tonumber(b), tonumber(c)
end

local function flush_states()
  for i = 1, dirty_count do
    local key = dirty[i]
    local value
    if state_c[key] == nil then
      value = string.format('%.17g %.17g', state_a[key], state_b[key])
    else
      value = string.format('%.17g %.17g %.17g', state_a[key], state_b[key], state_c[key])
    end
    redis.call('SET', key, value, 'PX', math.ceil(state_ttl[key]) + MARGIN_MS)
  end
end

-- The write of an allowed check, made when its group commits. kind 2: KEYS[k] = "x y", ttl z;
-- kind 3: KEYS[k] = "x y z", ttl w; otherwise WRITERS[kind](k, x, y, z, w, v), at once.
local function commit(k, kind, x, y, z, w, v)
  if kind == 2 then
    remember(KEYS[k], x, y, nil, z)
  elseif kind == 3 then
    remember(KEYS[k], x, y, z, w)
  else
    WRITERS[kind](k, x, y, z, w, v)
  end
end
`;

const KEY_COUNTS = scriptFragments.map((a) => `${a.code} = ${a.keys.length}`).join(', ');

const MAIN = `
local KEY_COUNT = {${KEY_COUNTS}}
local spec_code, spec_enforce, spec_limit, spec_window, spec_burst = {}, {}, {}, {}, {}
local a = 2
for s = 1, tonumber(ARGV[1]) do
  spec_code[s] = ARGV[a]
  spec_enforce[s] = ARGV[a + 1] == '1'
  spec_limit[s] = tonumber(ARGV[a + 2])
  spec_window[s] = tonumber(ARGV[a + 3])
  spec_burst[s] = tonumber(ARGV[a + 4])
  a = a + ${ARGS_PER_SPEC}
end
local reply = {}
-- Pending writes of the current group, by position in the group (reused by every group).
local w_kind, w_key, w_x, w_y, w_z, w_w, w_v = {}, {}, {}, {}, {}, {}, {}
local redis_now = nil
local k = 1
local r = 0
local groups = tonumber(ARGV[a])
a = a + 1
for g = 1, groups do
  local count = tonumber(ARGV[a])
  local now = tonumber(ARGV[a + 1])
  a = a + ${GROUP_ARGS}
  if now == nil then
    if redis_now == nil then
      if redis.replicate_commands then redis.replicate_commands() end
      local time = redis.call('TIME')
      redis_now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    now = redis_now
  else
    now = math.floor(now)
  end
  local blocked = false
  for i = 1, count do
    local s = tonumber(ARGV[a])
    local code = spec_code[s]
    local run = ALGORITHMS[code]
    if run == nil then
      LOADERS[code]()
      run = ALGORITHMS[code]
    end
    local allowed, limit, remaining, reset, retry, delay, kind, x, y, z, w, v = run(
      k, now, spec_limit[s], spec_window[s], spec_burst[s], tonumber(ARGV[a + 1]), ARGV[a + 2])
    if allowed then
      reply[r + 1] = 1
      w_kind[i], w_key[i], w_x[i], w_y[i], w_z[i], w_w[i], w_v[i] = kind, k, x, y, z, w, v
    else
      reply[r + 1] = 0
      w_kind[i] = false
      if spec_enforce[s] then blocked = true end
    end
    reply[r + 2] = num(limit)
    reply[r + 3] = num(remaining)
    reply[r + 4] = num(reset)
    reply[r + 5] = num(retry)
    if delay == nil then reply[r + 6] = '' else reply[r + 6] = num(delay) end
    k = k + KEY_COUNT[code]
    a = a + ${ARGS_PER_CHECK}
    r = r + ${RESULTS_PER_CHECK}
  end
  if not blocked then
    for i = 1, count do
      if w_kind[i] then commit(w_key[i], w_kind[i], w_x[i], w_y[i], w_z[i], w_w[i], w_v[i]) end
    end
  end
end
flush_states()
return reply
`;

/**
 * Script text as sent to Redis: leading whitespace, blank lines and whole-line comments removed, so that
 * reformatting or re-commenting the source does not change the SHA1 (and so the script cache entry).
 */
export function compact(lua: string): string {
  return lua
    .split('\n')
    .map((line) => line.trimStart())
    .filter((line) => line !== '' && !line.startsWith('--'))
    .join('\n');
}

/** The one multi-rule evaluation script: prelude, shared helpers, every algorithm, then the groups. */
export const EVALUATE_SCRIPT = compact(
  [
    PRELUDE,
    ...sharedLua,
    ...scriptFragments.map((a) => `LOADERS.${a.code} = function()\n${a.lua}\nend`),
    MAIN,
  ].join('\n'),
);

/** The lease release script (ZREM + HDEL per lease). */
export const RELEASE_SCRIPT = compact(releaseLua);

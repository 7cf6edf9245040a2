import { scriptFragments } from './algorithms/index.js';
import { policyLua } from './policy.js';
import { BINARY_STATE_OFF } from './stateFormat.js';

/** ARGV entries of each spec (algorithm, mode, limits: what the checks of one rule share). */
export const ARGS_PER_SPEC = 7;
/** ARGV entries at the start of each group, before its checks. */
export const GROUP_ARGS = 2;
/** Values each check takes in ARGV after its group's header. */
export const ARGS_PER_CHECK = 3;
/** What the script sends back per check. */
export const RESULTS_PER_CHECK = 7;
/** The retry time the script returns for a request that can never fit (Infinity in TypeScript). */
export const NEVER = -1;
/** The `allowed` value of every check of a group the script could not decide (see FAILURE). */
export const FAILED = -1;

/** A whole number the reply carries as an integer (|x| < 2^53; x % 1 is NaN for NaN and infinities). */
const numInto = (target: string, x: string): string =>
  `if ${x} % 1 == 0 and ${x} < 9007199254740992 and ${x} > -9007199254740992 then ${target} = ${x} else ${target} = fmt(${x}) end`;

/**
 * The RESULTS_PER_CHECK reply values of a decided check, from reply[r + 1]: the locals allowed, remaining,
 * reset, retry and delay, and the given limit and flag. The body of the prelude's answer, and written out in the
 * one-rule loop.
 */
export const answerLua = (limit: string, flag: string): string => `
  if allowed then reply[r + 1] = 1 else reply[r + 1] = 0 end
  ${numInto('reply[r + 2]', limit)}
  ${numInto('reply[r + 3]', 'remaining')}
  ${numInto('reply[r + 4]', 'reset')}
  ${numInto('reply[r + 5]', 'retry')}
  if delay == nil then reply[r + 6] = '' else ${numInto('reply[r + 6]', 'delay')} end
  reply[r + 7] = ${flag}`;

/** Sets redis_now from Redis TIME, once per call: the clock of checks sent with '' for now. */
export const REDIS_NOW = `if redis_now == nil then
    if redis.replicate_commands then redis.replicate_commands() end
    local time = redis.call('TIME')
    redis_now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end`;

/**
 * What a call needs only when a check raised: defined where the error is handled, so that a call without
 * one makes none of these functions (each function a script defines costs every call that runs its line).
 */
export const FAILURE = `
-- A group that raised an error. An error about the server (READONLY, OOM, ...) fails the whole call, as
-- it would without pcall. An error about the data (WRONGTYPE, ERR, or a Lua error on a value it cannot
-- parse) fails this group alone: each check answers ${FAILED} and, second, 1 if deciding it alone fails
-- too (see unreadable).
local function raise_if_server_error(err)
  local message = err
  if type(err) == 'table' then message = err.err end
  message = tostring(message)
  local code = string.match(message, '^(%u+) ')
  if code ~= nil and code ~= 'WRONGTYPE' and code ~= 'ERR' then error({err = message}) end
end

-- 1 when deciding a check alone fails: its keys are deleted, their state cannot be read, so the rule
-- counts afresh from the next request instead of failing it forever. 0 otherwise.
local function unreadable(run, k, nkeys, now, limit, window, burst, cost, extra)
  if pcall(run, k, now, limit, window, burst, cost, extra) then return 0 end
  for key = k, k + nkeys - 1 do redis.call('DEL', KEYS[key]) end
  return 1
end

local function failed_answer(r, bad)
  reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5], reply[r + 6] = ${FAILED}, bad, 0, 0, 0, ''
  reply[r + 7] = ''
end

`;

/** What every evaluation script starts with: constants, state reads and writes, the reply. */
export const PRELUDE = `
-- Sluice: the checks of one or more requests in ONE call. The checks of a request form a group; groups
-- run one after the other, as if the requests had come one by one. Per group, phase 1 decides every
-- check (reads only); phase 2 records the state of the allowed checks, only if no enforcing check of
-- that group denied. A denial in one group never stops another group.
-- ARGV: the specs, then the groups.
--   number of specs, then per spec, ${ARGS_PER_SPEC} values:
--     algorithm code ('fw', 'sw', ...)
--     number of keys a check of it uses
--     '1' enforce | '0' shadow
--     limit
--     window, ms
--     burst
--     policy: '' none, else bans, penalty and idempotency (see policy.ts, policyText)
--   number of groups, then per group, ${GROUP_ARGS} values:
--     number of checks in the group
--     now, epoch ms; '' = take it from Redis TIME (read once per call)
--   and per check of the group, ${ARGS_PER_CHECK} values:
--     spec number (1-based)
--     cost
--     extra (lease id, calendar period, or '')
-- KEYS: per check, the keys its algorithm uses, in order, then its policy's (ban state, idempotency marker).
-- The reply: ${RESULTS_PER_CHECK} values per check, in order: allowed (1/0), limit, remaining, reset, retry, delay ('' = none),
-- policy flag ('' = none, 'r' = replayed, 'b<until>' = banned, 'B<until>' = banned from this denial on);
-- for each check of a group that failed: ${FAILED}, then 1 if its own state was unreadable (see fail_group).
-- Everything per check travels as plain values (multiple returns, flat arrays reused by every group):
-- no table, no closure per check. What each call sets up is kept small too (a handful of tables, each
-- algorithm's functions defined only when the call uses it), so that one check alone stays cheap.
local NEVER = ${NEVER}
local MARGIN_MS = 1000
local ALGORITHMS = {}
-- Writers of the algorithms whose state is not a string of numbers (sliding_log, concurrency).
local WRITERS = {}
-- The policy functions (bans, penalty, idempotency), defined when a call first meets a policy.
local POLICY = {}

-- No locals for library functions (local floor = math.floor): each function the call defines would capture
-- them, and capturing costs more per call than the global reads save at a few checks per call.
local function fmt(x)
  return string.format('%.17g', x)
end

-- State of the common algorithms: a string of two or three numbers, "<a> <b>" or "<a> <b> <c>".
-- Commits of this call are kept here by key and each key is SET once when the call ends: a hot key
-- shared by many requests of the call costs one GET and one SET, not one per request. The script is
-- atomic, so nobody sees the difference. states: 6 values per key (key, a, b, c or false, ttl, keep), in
-- the order of first write; state_at: key -> index of its first value.
-- keep: the key's TTL already ends where the new state's does (an algorithm says so when the state it read
-- ends at the same moment: same window, same period), so the SET keeps it (KEEPTTL) instead of setting it
-- again, which costs Redis about as much as the SET itself. Only when every write of the call says so (a key
-- this call created has no TTL yet), and only on a server that tells its version (7.0+): KEEPTTL needs 6.0.
local KEEP_TTL = redis.REDIS_VERSION_NUM ~= nil
local states, state_at, state_count = {}, {}, 0

local function remember(key, a, b, c, ttl, keep)
  local at = state_at[key]
  if at == nil then
    at = state_count * 6
    state_count = state_count + 1
    state_at[key] = at
    states[at + 1] = key
    states[at + 6] = keep and KEEP_TTL
  elseif not keep then
    states[at + 6] = false
  end
  states[at + 2], states[at + 3], states[at + 4], states[at + 5] = a, b, c, ttl
end

-- A state is text, "<a> <b>" or "<a> <b> <c>" (every version writes it), or binary (stateFormat 'binary'): a
-- zero byte, then the numbers as little-endian doubles (struct.pack '<Bdd' / '<Bddd'), which no text starts
-- with. Both are read, whatever this call writes. Text is read with one match (no table); nil when the key does
-- not exist. '[^ ]+' matches what '%S+' did in the states written so far (numbers, one space apart) at half the
-- cost (no character class to look up). A binary state of the wrong length reads as none (as text that does not
-- match), so that a key written by another algorithm counts afresh rather than failing.
local function read2(key)
  local at = state_at[key]
  if at then return states[at + 2], states[at + 3] end
  local raw = redis.call('GET', key)
  if not raw then return nil end
  if string.byte(raw) == 0 then
    if #raw ~= 17 then return nil end
    local a, b = struct.unpack('<dd', raw, 2)
    return a, b
  end
  local a, b = string.match(raw, '^([^ ]+) ([^ ]+)')
  return tonumber(a), tonumber(b)
end

local function read3(key)
  local at = state_at[key]
  if at then return states[at + 2], states[at + 3], states[at + 4] end
  local raw = redis.call('GET', key)
  if not raw then return nil end
  if string.byte(raw) == 0 then
    if #raw ~= 25 then return nil end
    local a, b, c = struct.unpack('<ddd', raw, 2)
    return a, b, c
  end
  local a, b, c = string.match(raw, '^([^ ]+) ([^ ]+) ([^ ]+)')
  return tonumber(a), tonumber(b), tonumber(c)
end

-- The state's format this script writes: text, or binary in the script stateFormat.ts makes of it (see read2).
${BINARY_STATE_OFF}

-- A state written. Its text: whole numbers below 1e14 by concatenation (Lua writes them with '%.14g': the digits
-- '%d' wrote, at a fraction of string.format's cost; x % 1 == 0 is false for NaN and infinities), anything else
-- with '%.17g' (exact round trip); all read alike, by this version and the ones before. keep: the key's TTL
-- already ends where the new state's does (see remember): SET with KEEPTTL, which with the PTTL that checks the
-- key has a TTL costs Redis less than setting it again (a key kept with no TTL, restored from a dump or
-- PERSISTed, would never expire: it gets the new one).
local function write_state(key, a, b, c, ttl, keep)
  local value
  if BINARY_STATE then
    if c then value = struct.pack('<Bddd', 0, a, b, c) else value = struct.pack('<Bdd', 0, a, b) end
  elseif a % 1 == 0 and b % 1 == 0 and a < 1e14 and a > -1e14 and b < 1e14 and b > -1e14
    and (not c or (c % 1 == 0 and c < 1e14 and c > -1e14)) then
    if c then value = a .. ' ' .. b .. ' ' .. c else value = a .. ' ' .. b end
  elseif c then
    value = string.format('%.17g %.17g %.17g', a, b, c)
  else
    value = string.format('%.17g %.17g', a, b)
  end
  if keep and redis.call('PTTL', key) > 0 then
    redis.call('SET', key, value, 'KEEPTTL')
  else
    redis.call('SET', key, value, 'PX', math.ceil(ttl) + MARGIN_MS)
  end
end

local function flush_states()
  for at = 0, (state_count - 1) * 6, 6 do
    write_state(states[at + 1], states[at + 2], states[at + 3], states[at + 4], states[at + 5], states[at + 6])
  end
end

-- The write of an allowed check, made when its group commits. kind 2: KEYS[k] = "x y", ttl z, w true: the
-- key's TTL already ends there (see remember); kind 3: KEYS[k] = "x y z", ttl w, v true: likewise; otherwise
-- WRITERS[kind](k, x, y, z, w, v), at once.
local function commit(k, kind, x, y, z, w, v)
  if kind == 2 then
    remember(KEYS[k], x, y, false, z, w == true)
  elseif kind == 3 then
    remember(KEYS[k], x, y, z, w, v == true)
  else
    WRITERS[kind](k, x, y, z, w, v)
  end
end

local reply = {}

-- The ${RESULTS_PER_CHECK} reply values of a decided check, from reply[r + 1]. A reply number: whole numbers go as
-- integers (no text to format or parse), others as exact text; the test written out, not a function: it
-- runs four times per check.
local function answer(r, allowed, limit, remaining, reset, retry, delay, flag)
  ${answerLua('limit', 'flag')}
end

local redis_now = nil

-- A group's now: whole ms from ARGV, or from Redis TIME (read once per call) when ARGV has ''.
local function now_of(text)
  local now = tonumber(text)
  if now ~= nil then return math.floor(now) end
  ${REDIS_NOW}
  return redis_now
end
`;

/** Defines an algorithm's functions the first time a call uses it: one branch per fragment. */
const LOAD = `
local function load(code)
${scriptFragments.map((a, i) => `${i === 0 ? 'if' : 'elseif'} code == '${a.code}' then\n${a.lua}`).join('\n')}
end
end
`;

/** Defines the policy functions the first time a call meets a policy. */
const LOAD_POLICY = `
local function load_policy()
${policyLua}
end
`;

const MAIN = `
-- spec: ${ARGS_PER_SPEC} values per spec (code, key count, enforce, limit, window, burst, policy), flat
local spec = {}
local a = 2
for at = 0, (tonumber(ARGV[1]) - 1) * ${ARGS_PER_SPEC}, ${ARGS_PER_SPEC} do
  spec[at + 1] = ARGV[a]
  spec[at + 2] = tonumber(ARGV[a + 1])
  spec[at + 3] = ARGV[a + 2] == '1'
  spec[at + 4] = tonumber(ARGV[a + 3])
  spec[at + 5] = tonumber(ARGV[a + 4])
  spec[at + 6] = tonumber(ARGV[a + 5])
  if ARGV[a + 6] == '' then
    spec[at + 7] = false
  else
    if POLICY.run == nil then load_policy() end
    spec[at + 7] = POLICY.parse(ARGV[a + 6])
  end
  a = a + ${ARGS_PER_SPEC}
end
-- Pending writes of the current group: 10 values per check (kind, k, x, y, z, w, v, then the idempotency
-- marker to set: its KEYS index or false, and its expiry, then a paid debt's key to delete, or nil), reused by
-- every group.
local pending = {}

-- Phase 1 and 2 of one group whose checks start at ARGV[a], KEYS[k] and reply[r + 1]; returns the
-- positions after it. Run under pcall, so that a key the group cannot read fails this group alone.
local function run_group(count, now, a, k, r)
  local blocked = false
  local p = 0
  for i = 1, count do
    local s = (tonumber(ARGV[a]) - 1) * ${ARGS_PER_SPEC}
    local code = spec[s + 1]
    local run = ALGORITHMS[code]
    if run == nil then
      load(code)
      run = ALGORITHMS[code]
    end
    local policy = spec[s + 7]
    local allowed, limit, remaining, reset, retry, delay, kind, x, y, z, w, v, flag, mark, paid
    if policy then
      allowed, limit, remaining, reset, retry, delay, kind, x, y, z, w, v, flag, mark, paid = POLICY.run(
        policy, run, k, now, spec[s + 4], spec[s + 5], spec[s + 6], tonumber(ARGV[a + 1]), ARGV[a + 2], spec[s + 2])
    else
      allowed, limit, remaining, reset, retry, delay, kind, x, y, z, w, v = run(
        k, now, spec[s + 4], spec[s + 5], spec[s + 6], tonumber(ARGV[a + 1]), ARGV[a + 2])
      flag, mark = '', false
    end
    if allowed then
      pending[p + 1], pending[p + 2], pending[p + 3], pending[p + 4] = kind, k, x, y
      pending[p + 5], pending[p + 6], pending[p + 7] = z, w, v
      pending[p + 8] = mark
      if mark then pending[p + 9] = now + policy.idem end
      pending[p + 10] = paid
    else
      pending[p + 1] = false
      if spec[s + 3] then blocked = true end
    end
    answer(r, allowed, limit, remaining, reset, retry, delay, flag)
    k = k + spec[s + 2]
    a = a + ${ARGS_PER_CHECK}
    r = r + ${RESULTS_PER_CHECK}
    p = p + 10
  end
  if not blocked then
    for at = 0, p - 10, 10 do
      if pending[at + 1] then
        commit(pending[at + 2], pending[at + 1], pending[at + 3], pending[at + 4], pending[at + 5], pending[at + 6], pending[at + 7])
        if pending[at + 8] then
          local expires = pending[at + 9]
          redis.call('SET', KEYS[pending[at + 8]], fmt(expires), 'PX', math.ceil(expires - now) + MARGIN_MS)
        end
        if pending[at + 10] then redis.call('DEL', KEYS[pending[at + 10]]) end
      end
    end
  end
  return a, k, r
end

local k = 1
local r = 0
local groups = tonumber(ARGV[a])
a = a + 1
for g = 1, groups do
  local count = tonumber(ARGV[a])
  local now = now_of(ARGV[a + 1])
  a = a + ${GROUP_ARGS}
  local ok, next_a, next_k, next_r = pcall(run_group, count, now, a, k, r)
  if ok then
    a, k, r = next_a, next_k, next_r
  else
    -- The group raised (see FAILURE): each of its checks fails.
    ${FAILURE}
    raise_if_server_error(next_a)
    for i = 1, count do
      local s = (tonumber(ARGV[a]) - 1) * ${ARGS_PER_SPEC}
      local algorithm = spec[s + 1]
      if ALGORITHMS[algorithm] == nil then load(algorithm) end
      failed_answer(r, unreadable(ALGORITHMS[algorithm], k, spec[s + 2], now, spec[s + 4], spec[s + 5], spec[s + 6],
        tonumber(ARGV[a + 1]), ARGV[a + 2]))
      k = k + spec[s + 2]
      a = a + ${ARGS_PER_CHECK}
      r = r + ${RESULTS_PER_CHECK}
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

/** The one multi-rule evaluation script: prelude, every algorithm (defined on first use), then the groups. */
export const EVALUATE_SCRIPT = compact([PRELUDE, LOAD, LOAD_POLICY, MAIN].join('\n'));

import { releaseLua, scriptFragments, sharedLua } from './algorithms/index.js';

/** Values each check takes in ARGV after the header (see the layout in MAIN). */
export const ARGS_PER_CHECK = 7;
/** ARGV entries before the first check. */
export const HEADER_ARGS = 2;
/** What the script sends back per check. */
export const RESULTS_PER_CHECK = 6;
/** The retry time the script returns for a request that can never fit (Infinity in TypeScript). */
export const NEVER = -1;

const PRELUDE = `
-- Sluice: every check of one request in ONE call. Phase 1 decides every check (reads only); phase 2
-- writes the state of the allowed checks, and only if no enforcing check denied.
-- ARGV[1]: now, epoch ms; '' = take it from Redis TIME
-- ARGV[2]: number of checks
-- then per check, ${ARGS_PER_CHECK} values:
--   algorithm code ('fw', 'sw', ...)
--   '1' enforce | '0' shadow
--   limit
--   window, ms
--   burst
--   cost
--   extra (lease id, calendar period, or '')
-- KEYS: per check, the keys its algorithm uses, in order.
local NEVER = ${NEVER}
local MARGIN_MS = 1000
local ALGORITHMS = {}
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

local function read_numbers(key)
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local values = {}
  for part in string.gmatch(raw, '%S+') do values[#values + 1] = tonumber(part) end
  return values
end

local function write_numbers(key, values, ttl)
  local parts = {}
  for i, value in ipairs(values) do parts[i] = fmt(value) end
  redis.call('SET', key, table.concat(parts, ' '), 'PX', math.ceil(ttl) + MARGIN_MS)
end
`;

const KEY_COUNTS = scriptFragments.map((a) => `${a.code} = ${a.keys.length}`).join(', ');

const MAIN = `
local KEY_COUNT = {${KEY_COUNTS}}
local now = tonumber(ARGV[1])
if now == nil then
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local count = tonumber(ARGV[2])
local outcomes = {}
local blocked = false
local next_key = 1
for i = 1, count do
  local a = ${HEADER_ARGS} + (i - 1) * ${ARGS_PER_CHECK}
  local code = ARGV[a + 1]
  local keys = {}
  for k = 1, KEY_COUNT[code] do keys[k] = KEYS[next_key + k - 1] end
  next_key = next_key + KEY_COUNT[code]
  local p = {limit = tonumber(ARGV[a + 3]), window = tonumber(ARGV[a + 4]), burst = tonumber(ARGV[a + 5]), extra = ARGV[a + 7]}
  local run = ALGORITHMS[code]
  if run == nil then
    LOADERS[code]()
    run = ALGORITHMS[code]
  end
  local outcome = run(keys, now, p, tonumber(ARGV[a + 6]))
  outcomes[i] = outcome
  if (not outcome.allowed) and ARGV[a + 2] == '1' then blocked = true end
end
if not blocked then
  for i = 1, count do
    if outcomes[i].allowed and outcomes[i].commit then outcomes[i].commit() end
  end
end
local reply = {}
for i = 1, count do
  local o = outcomes[i]
  local delay = ''
  if o.delay ~= nil then delay = num(o.delay) end
  local allowed = 0
  if o.allowed then allowed = 1 end
  local at = (i - 1) * ${RESULTS_PER_CHECK}
  reply[at + 1] = allowed
  reply[at + 2] = num(o.limit)
  reply[at + 3] = num(o.remaining)
  reply[at + 4] = num(o.reset)
  reply[at + 5] = num(o.retry)
  reply[at + 6] = delay
end
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

/** The one multi-rule evaluation script: prelude, shared helpers, every algorithm, then the two phases. */
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

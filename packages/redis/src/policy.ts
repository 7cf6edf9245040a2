import {
  type BanState,
  type Check,
  type CheckPolicy,
  type CheckResult,
  counterKey,
} from '@sluice/core/store';

/*
 * A rule's policy (bans, penalty, idempotency) in the evaluation script: the Lua port of core's
 * stores/policies.ts, wrapped around the rule's algorithm in the same script call. A rule without a policy
 * sends '' and runs its algorithm alone, as before.
 */

/** Key suffix of a rule's ban state: "count since until level levelUntil". */
export const BAN_SUFFIX = 'ban';

/** Key suffix of an idempotency marker, before the request's idempotency id (a hash). */
export const MARKER_SUFFIX = 'idem';

/** Key suffix of a settled rule's debt: the epoch ms the key has paid it off (core's store/settle.ts). */
export const DEBT_SUFFIX = 'debt';

/**
 * The policy of a settle's charge above the estimate (a lease's `owed`, sent as a check): charge the units
 * whatever the limit, the rest as debt. Only giveBackChecks sends it; it is never a rule's.
 */
export const OWE_POLICY: CheckPolicy = Object.freeze({ debt: true });

/** The suffixes after `<prefix>:{<tag>}:<rule>:` of a check's policy keys, after its algorithm's keys. */
export function policySuffixes(check: Check): string[] {
  const suffixes: string[] = [];
  if (check.policy?.ban !== undefined) suffixes.push(BAN_SUFFIX);
  if (hasMarker(check)) suffixes.push(`${MARKER_SUFFIX}:${check.idempotencyId}`);
  if (check.policy?.debt === true) suffixes.push(DEBT_SUFFIX);
  return suffixes;
}

/** The Redis key of a rule's ban state for a key tag (same hash tag as its counter). */
export function banKey(prefix: string, id: { rule: string; tag: string }): string {
  return counterKey(prefix, id, BAN_SUFFIX);
}

/** A ban state as the script stores it ("count since until level levelUntil"), or undefined if it is not one. */
export function parseBanState(raw: string | null | undefined): BanState | undefined {
  const numbers = (raw ?? '').split(' ').map(Number);
  if (numbers.length !== 5 || !numbers.every(Number.isFinite)) return undefined;
  const [count, since, until, level, levelUntil] = numbers as [number, number, number, number, number];
  return { count, since, until, level, levelUntil };
}

/** Whether the script reads (and may set) an idempotency marker for the check. */
function hasMarker(check: Check): boolean {
  return check.idempotencyId !== undefined && check.policy?.idempotentMs !== undefined;
}

/** Spec texts of each policy, with and without a marker key, made once per compiled policy. */
const texts = new WeakMap<CheckPolicy, [string, string]>();

/**
 * The policy argument of a check's spec, '' when it has none:
 * "<after> <within> <for> <penalty> <idempotent ms> <keys> <escalate...>", 0 for absent; <keys> adds 1 for
 * a marker key, 2 for a debt key (a settled rule), 4 for a settle's charge (OWE_POLICY).
 */
export function policyText(check: Check): string {
  const policy = check.policy;
  if (policy === undefined) return '';
  let both = texts.get(policy);
  if (both === undefined) {
    const ban = policy.ban;
    const parts = [
      ban?.after ?? 0,
      ban?.withinMs ?? 0,
      ban?.forMs ?? 0,
      policy.penalty ?? 0,
      policy.idempotentMs ?? 0,
    ];
    const escalate = ban?.escalateMs ?? [];
    const flags = (policy.debt === true ? 2 : 0) + (policy === OWE_POLICY ? 4 : 0);
    both = [[...parts, flags, ...escalate].join(' '), [...parts, flags + 1, ...escalate].join(' ')];
    texts.set(policy, both);
  }
  return both[hasMarker(check) ? 1 : 0];
}

/**
 * What the script's flag value adds to a result: '' nothing, 'r' replayed, 'b<until>' / 'B<until>' a ban,
 * 'v<count>' a denial counted towards a ban.
 */
export function flagFields(
  flag: unknown,
): Pick<CheckResult, 'bannedUntil' | 'banStarted' | 'replayed' | 'violations'> {
  if (flag === '' || flag === undefined || flag === null) return {};
  const text = String(flag);
  if (text === 'r') return { replayed: true };
  if (text[0] === 'v') return { violations: Number(text.slice(1)) };
  return { bannedUntil: Number(text.slice(1)), banStarted: text[0] === 'B' };
}

/**
 * The policy functions, defined the first time a call meets a policy (see `load_policy` in the script).
 * `POLICY.run(p, run, k, now, limit, window, burst, cost, extra, nkeys)` returns what an algorithm returns,
 * then the flag, the marker to set on commit (KEYS index and TTL, or false) and the debt key to delete on
 * commit (KEYS index, or nil: a settled rule's admission that paid its key's debt).
 */
export const policyLua = `
local function pol_finite(x)
  return x ~= nil and x == x and x > -math.huge and x < math.huge
end

-- The policy of a spec, parsed once per call: its text (see policyText) as a table.
function POLICY.parse(text)
  local n = {}
  for part in string.gmatch(text, '%S+') do n[#n + 1] = tonumber(part) end
  local flags = n[6]
  local p = { after = n[1], within = n[2], ban_for = n[3], penalty = n[4], idem = n[5], marker = flags % 2 == 1,
    debt = math.floor(flags / 2) % 2 == 1, owe = flags >= 4, escalate = {} }
  p.longest = p.ban_for
  for i = 7, #n do
    p.escalate[#p.escalate + 1] = n[i]
    if n[i] > p.longest then p.longest = n[i] end
  end
  p.keys = 0
  if p.after > 0 then p.keys = p.keys + 1 end
  if p.marker then p.keys = p.keys + 1 end
  if p.debt then p.keys = p.keys + 1 end
  return p
end

-- Length of ban number level (1 is the first): for, then each escalate step, the last repeating.
local function ban_length(p, level)
  local steps = #p.escalate
  if level <= 1 or steps == 0 then return p.ban_for end
  return p.escalate[math.min(level - 1, steps)]
end

-- KEYS[key] as five numbers, or nil when missing or not five finite numbers.
local function ban_read(key)
  local raw = redis.call('GET', key)
  if not raw then return nil end
  local a, b, c, d, e = string.match(raw, '^(%S+) (%S+) (%S+) (%S+) (%S+)$')
  a, b, c, d, e = tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(e)
  if not (pol_finite(a) and pol_finite(b) and pol_finite(c) and pol_finite(d) and pol_finite(e)) then return nil end
  return a, b, c, d, e
end

local function ban_write(key, count, since, untl, level, level_until, ttl)
  redis.call('SET', key, string.format('%.17g %.17g %.17g %.17g %.17g', count, since, untl, level, level_until),
    'PX', math.ceil(ttl) + MARGIN_MS)
end

-- The answer to a banned key: denied until the ban ends, the counter left alone.
local function banned(limit, left, now, mark)
  return false, limit, 0, left, left, nil, false, nil, nil, nil, nil, nil, mark .. fmt(now + left), false
end

-- What KEYS[dk] says the key owes, 0 when nothing (core's debtOf).
local function debt_of(dk)
  local owed = tonumber(redis.call('GET', KEYS[dk]))
  if pol_finite(owed) and owed > 0 then return owed end
  return 0
end

local function debt_ms(units, limit, window)
  if limit > 0 then return math.ceil(units * window / limit) end
  return 0
end

-- Sets what the key owes, kept as long as paying it off and refilling the counter take (core's setDebt).
local function debt_set(dk, owed, limit, window)
  if owed > 0 then
    redis.call('SET', KEYS[dk], fmt(owed), 'PX', debt_ms(owed, limit, window) + 2 * window + MARGIN_MS)
  else
    redis.call('DEL', KEYS[dk])
  end
end

-- A check of a key owing units (core's decideInDebt): decided at its cost plus the debt, the debt key deleted
-- when its group commits; a debt the counter never holds at once is paid as far as there is room, at once,
-- and the request waits until the counter is whole again.
local function in_debt(run, k, dk, owed, now, limit, window, burst, cost, extra)
  local allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v = run(k, now, limit, window, burst, cost + owed, extra)
  if allowed then return true, l, rem, rst, retry, delay, kind, x, y, z, w, v, '', false, dk end
  if retry ~= NEVER then return false, l, 0, rst, retry, delay, false, nil, nil, nil, nil, nil, '', false end
  local room = math.min(owed, math.max(0, math.floor(rem)))
  local left = owed
  local whole = rst
  if room > 0 then
    local ok, _, _, rst2, _, _, k2, x2, y2, z2, w2, v2 = run(k, now, limit, window, burst, room, extra)
    if ok then
      commit(k, k2, x2, y2, z2, w2, v2)
      left = owed - room
      whole = math.max(rst, rst2)
    end
  end
  debt_set(dk, left, limit, window)
  return false, l, 0, whole, whole, delay, false, nil, nil, nil, nil, nil, '', false
end

-- A settle's charge above the estimate (core's chargeOwed): all of cost when it fits, else the room left
-- and the rest added to the debt.
local function owe(run, k, dk, now, limit, window, burst, cost, extra)
  local allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v = run(k, now, limit, window, burst, cost, extra)
  if allowed then return true, l, rem, rst, retry, delay, kind, x, y, z, w, v, '', false end
  local room = math.min(cost, math.max(0, math.floor(rem)))
  local excess = cost
  if room > 0 then
    allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v = run(k, now, limit, window, burst, room, extra)
    if allowed then excess = cost - room end
  end
  debt_set(dk, debt_of(dk) + excess, limit, window)
  if allowed then return true, l, rem, rst, retry, delay, kind, x, y, z, w, v, '', false end
  return false, l, rem, rst, retry, delay, false, nil, nil, nil, nil, nil, '', false
end

function POLICY.run(p, run, k, now, limit, window, burst, cost, extra, nkeys)
  local pk = k + nkeys - p.keys
  local bk, mk, dk = nil, nil, nil
  if p.after > 0 then bk = pk; pk = pk + 1 end
  if p.marker then mk = pk; pk = pk + 1 end
  if p.debt then dk = pk end
  if p.owe then return owe(run, k, dk, now, limit, window, burst, cost, extra) end
  if dk then
    local owed = debt_of(dk)
    if owed > 0 then return in_debt(run, k, dk, owed, now, limit, window, burst, cost, extra) end
  end
  local count, since, untl, level, level_until
  if bk then
    count, since, untl, level, level_until = ban_read(KEYS[bk])
    if count ~= nil and untl > now then return banned(limit, math.min(untl - now, p.longest), now, 'b') end
  end
  if mk then
    local expires = tonumber(redis.call('GET', KEYS[mk]))
    if expires ~= nil and expires > now then
      local _, l0, rem0, rst0 = run(k, now, limit, window, burst, 0, extra)
      return true, l0, rem0, rst0, 0, nil, false, nil, nil, nil, nil, nil, 'r', false
    end
  end
  local allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v = run(k, now, limit, window, burst, cost, extra)
  if allowed then
    if mk then return allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v, '', mk end
    return allowed, l, rem, rst, retry, delay, kind, x, y, z, w, v, '', false
  end
  if p.penalty > 0 then
    local units = math.min(p.penalty, math.floor(rem))
    if units >= 1 then
      local ok, _, _, _, _, _, k2, x2, y2, z2, w2, v2 = run(k, now, limit, window, burst, units, extra)
      if ok then
        commit(k, k2, x2, y2, z2, w2, v2)
        local a3, l3, r3, s3, t3, d3 = run(k, now, limit, window, burst, cost, extra)
        if not a3 then l, rem, rst, retry, delay = l3, r3, s3, t3, d3 end
      end
    end
  end
  if bk then
    local fresh = count == nil or not (count > 0) or not (since <= now) or now >= since + p.within
    if fresh then count, since = 1, now else count = count + 1 end
    if level_until == nil or not (level_until > now and level > 0) then level, level_until = 0, 0 end
    if count < p.after then
      ban_write(KEYS[bk], count, since, 0, level, level_until, math.max(since + p.within, level_until) - now)
    else
      local ends = now + ban_length(p, level + 1)
      ban_write(KEYS[bk], 0, now, ends, level + 1, ends + p.longest, ends + p.longest - now)
      return banned(limit, ends - now, now, 'B')
    end
    return false, l, rem, rst, retry, delay, false, nil, nil, nil, nil, nil, 'v' .. count, false
  end
  return false, l, rem, rst, retry, delay, false, nil, nil, nil, nil, nil, '', false
end
`;

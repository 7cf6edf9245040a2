import type { LimitParams } from '@sluice/core/store';
import { type LuaAlgorithm, luaAlgorithms } from './algorithms/index.js';
import {
  commitLua,
  leanScriptOf,
  nowLua,
  oneRuleArgv,
  oneRuleOf,
  oneRuleScript,
  takesExtra,
} from './oneRuleScript.js';
import { answerLua, FAILURE, RESULTS_PER_CHECK } from './script.js';
import { type CallSettings, type Group, keyOf } from './scriptCall.js';
import type { RedisScript } from './transport.js';

/*
 * The next common call made lean: every check of every group of one algorithm, with no policy, but groups of
 * several checks (a request limited per key, per tenant and globally) and rules of different limits and modes.
 * The general script pays for what such a call never uses (a spec table of every algorithm and policy, the
 * dispatch that defines an algorithm on first use, a closure and a pcall per group, a function per answer and
 * per commit). This script is made per algorithm, as the one-rule script is (oneRuleScript.ts, the case of one
 * check per group and one rule, still taken for it: it reads no group headers and keeps no pending writes),
 * and answers exactly what the general one answers (same reply layout, parsed by parseReply;
 * test/redis-one-rule.test.ts runs both on the same requests).
 */

/**
 * Values per spec (what checks share): enforce ('1' | '0'), limit, window, burst, and '1' when the check's key is
 * the only check of the call on that key (its state is then written as its group commits: see mainOf).
 */
const SPEC_VALUES = 5;
/** ARGV entries before the specs: the spec count. */
const HEAD_ARGS = 1;
/** ARGV entries at the start of each group: its check count, its now ('' = Redis TIME). */
const GROUP_ARGS = 2;

/**
 * ARGV entries per check: its spec's place in `spec` (0, 5, 10, ...: no arithmetic in the script), cost, and
 * extra only for an algorithm that takes one.
 */
const argsPerCheck = (algorithm: LuaAlgorithm): number => (takesExtra(algorithm) ? 3 : 2);

/**
 * Pending writes of a group (phase 1) are kept in one flat table reused by every group, 8 values per allowed
 * check (kind, k, x, y, z, w, v, and whether its key is its own), and made in phase 2 only if no enforcing check
 * of the group denied, in check order: commit (see PRELUDE) written out. The state of a key no other check of the
 * call touches is written at once (write_state), as the one-rule script does when all keys are distinct; a key
 * several checks share (the global rule's, a tenant's) is kept by remember and written once when the call ends.
 * Which is which goes per spec, not per check (no ARGV entry more per check): in the common shape the rule per key
 * has only keys of its own and the global rule only a shared one.
 * Groups run under one pcall, not one each: a group that raises stops the run at its start (ga, gk, gr: the
 * positions are moved on only when a group is done), fails alone, and the run goes on from the next group.
 */
function mainOf(algorithm: LuaAlgorithm): string {
  const extra = takesExtra(algorithm) ? 'ARGV[a + 2]' : "''";
  const keys = algorithm.keys.length;
  const step = argsPerCheck(algorithm);
  return `
-- spec: ${SPEC_VALUES} values per spec (enforce, limit, window, burst, own key), flat; checks name a spec by its place.
local spec = {}
local ga = ${HEAD_ARGS + 1}
for at = 0, (tonumber(ARGV[1]) - 1) * ${SPEC_VALUES}, ${SPEC_VALUES} do
  spec[at + 1], spec[at + 2] = ARGV[ga] == '1', tonumber(ARGV[ga + 1])
  spec[at + 3], spec[at + 4], spec[at + 5] = tonumber(ARGV[ga + 2]), tonumber(ARGV[ga + 3]), ARGV[ga + 4] == '1'
  ga = ga + ${SPEC_VALUES}
end
local pending = {}
local last = #ARGV
-- The next group: its first ARGV entry (its check count), its first KEYS entry, its place in the reply.
local gk, gr = 1, 0
local function run_groups()
  while ga <= last do
    local count = tonumber(ARGV[ga])
    ${nowLua('ga + 1')}
    local a, k, r = ga + ${GROUP_ARGS}, gk, gr
    local blocked, p = false, 0
    -- Phase 1: every check of the group decided, reading only.
    for i = 1, count do
      local s = tonumber(ARGV[a])
      local allowed, lim, remaining, reset, retry, delay, kind, x, y, z, w, v = run(
        k, now, spec[s + 2], spec[s + 3], spec[s + 4], tonumber(ARGV[a + 1]), ${extra})
      if allowed then
        pending[p + 1], pending[p + 2], pending[p + 3], pending[p + 4] = kind, k, x, y
        pending[p + 5], pending[p + 6], pending[p + 7], pending[p + 8] = z, w, v, spec[s + 5]
        p = p + 8
      elseif spec[s + 1] then
        blocked = true
      end
      ${answerLua('lim', "''")}
      a, k, r = a + ${step}, k + ${keys}, r + ${RESULTS_PER_CHECK}
    end
    -- Phase 2: the allowed checks' writes, unless an enforcing check denied.
    if not blocked then
      for at = 1, p, 8 do
        local kind, k, x, y = pending[at], pending[at + 1], pending[at + 2], pending[at + 3]
        local z, w, v, distinct = pending[at + 4], pending[at + 5], pending[at + 6], pending[at + 7]
        ${commitLua(algorithm)}
      end
    end
    ga, gk, gr = a, k, r
  end
end
while true do
  local ok, err = pcall(run_groups)
  if ok then break end
  ${FAILURE}
  raise_if_server_error(err)
  local count = tonumber(ARGV[ga])
  ${nowLua('ga + 1')}
  local a, k, r = ga + ${GROUP_ARGS}, gk, gr
  for i = 1, count do
    local s = tonumber(ARGV[a])
    failed_answer(r, unreadable(run, k, ${keys}, now, spec[s + 2], spec[s + 3], spec[s + 4], tonumber(ARGV[a + 1]), ${extra}))
    a, k, r = a + ${step}, k + ${keys}, r + ${RESULTS_PER_CHECK}
  end
  ga, gk, gr = a, k, r
end
flush_states()
return reply
`;
}

/** The one-algorithm script of an algorithm: the prelude, its fragment, the loop over the groups. */
export const oneAlgorithmScript = (algorithm: LuaAlgorithm): RedisScript =>
  leanScriptOf(`Evaluate_all_${algorithm.code}`, algorithm, mainOf);

/**
 * The algorithm of a call the one-algorithm script can make: every check of every group an evaluation of that
 * algorithm without a policy (no refund, no renewal). Undefined when the general script is needed.
 */
export function oneAlgorithmOf(groups: readonly Group[]): LuaAlgorithm | undefined {
  const algorithm = groups[0]?.checks[0]?.algorithm;
  if (algorithm === undefined) return undefined;
  for (const group of groups) {
    if (group.refund === true || group.renew === true) return undefined;
    for (const check of group.checks) {
      if (check.policy !== undefined || check.algorithm !== algorithm) return undefined;
    }
  }
  return luaAlgorithms[algorithm];
}

/**
 * The place in `specs` (SPEC_VALUES each) of the spec of a check of mode `enforce`, these limits and whether its
 * key is its own (`own`), added at the end when new: a call has few, found by a scan.
 */
function specAt(
  specs: (string | number)[],
  enforce: string,
  { limit, windowMs, burst }: LimitParams,
  own: string,
): number {
  for (let at = 0; at < specs.length; at += SPEC_VALUES) {
    if (
      specs[at] === enforce &&
      specs[at + 1] === limit &&
      specs[at + 2] === windowMs &&
      specs[at + 3] === burst &&
      specs[at + 4] === own
    )
      return at;
  }
  specs.push(enforce, limit, windowMs, burst, own);
  return specs.length - SPEC_VALUES;
}

/** numkeys, KEYS, then ARGV of a one-algorithm call (see mainOf), for groups oneAlgorithmOf accepted. */
export function oneAlgorithmArgv(
  groups: readonly Group[],
  algorithm: LuaAlgorithm,
  settings: CallSettings,
): (string | number)[] {
  const keys: (string | number)[] = [0];
  // How many checks of the call use each key (its first: the one a state of 2 or 3 numbers is written to).
  const uses = new Map<string, number>();
  for (const group of groups) {
    for (const check of group.checks) {
      for (const suffix of algorithm.keys) keys.push(keyOf(settings.prefix, check, suffix));
      const key = keys[keys.length - algorithm.keys.length] as string;
      uses.set(key, (uses.get(key) ?? 0) + 1);
    }
  }
  const specs: (string | number)[] = [];
  const args: (string | number)[] = [];
  const extra = takesExtra(algorithm);
  let k = 1;
  for (const group of groups) {
    args.push(group.checks.length, settings.redisClock ? '' : group.now);
    for (const check of group.checks) {
      const own = uses.get(keys[k] as string) === 1 ? '1' : '0';
      args.push(specAt(specs, check.mode === 'enforce' ? '1' : '0', check.params, own), check.cost);
      if (extra) args.push(algorithm.extra(check));
      k += algorithm.keys.length;
    }
  }
  keys[0] = keys.length - 1;
  keys.push(specs.length / SPEC_VALUES);
  for (const value of specs) keys.push(value);
  for (const arg of args) keys.push(arg);
  return keys;
}

/**
 * Where a call goes: the one-rule script of its algorithm (one check per group, one rule), else its
 * one-algorithm script (any checks of one algorithm, no policy), else (undefined) the general script.
 */
export function leanCallOf(
  groups: readonly Group[],
  settings: CallSettings,
): { script: RedisScript; argv: (string | number)[] } | undefined {
  const oneRule = oneRuleOf(groups);
  if (oneRule !== undefined)
    return { script: oneRuleScript(oneRule), argv: oneRuleArgv(groups, oneRule, settings) };
  const algorithm = oneAlgorithmOf(groups);
  if (algorithm === undefined) return undefined;
  return { script: oneAlgorithmScript(algorithm), argv: oneAlgorithmArgv(groups, algorithm, settings) };
}

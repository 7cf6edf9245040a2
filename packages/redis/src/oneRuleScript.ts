import type { LimitParams } from '@sluice/core/store';
import { type LuaAlgorithm, luaAlgorithms } from './algorithms/index.js';
import { noExtra } from './algorithms/types.js';
import { withoutUnused } from './prune.js';
import { answerLua, compact, FAILURE, PRELUDE, REDIS_NOW, RESULTS_PER_CHECK } from './script.js';
import { type CallSettings, type Group, keyOf } from './scriptCall.js';
import { type RedisScript, redisScript } from './transport.js';

/*
 * The common call made lean: every group holds one check, all of one algorithm and the same limits, with no
 * policy (one rule per request, a turn's requests coalesced). The general script pays, on every call, for
 * what such a call never uses: a spec table, the dispatch that defines an algorithm on first use, a closure
 * per group under pcall, pending writes held back for an enforcing denial. This script is made per
 * algorithm, with only its fragment, and answers exactly what the general one answers (same reply layout,
 * parsed by parseReply; test/redis-one-rule.test.ts runs both on the same requests).
 */

/**
 * ARGV entries before the checks: limit, window, burst, and '1' when no two checks of the call share a key
 * (each check's state is then written as it is decided, not kept for the end of the call: see mainOf).
 */
const HEAD_ARGS = 4;

/** Whether checks of the algorithm carry an `extra` argument (a lease id, a calendar period). */
export const takesExtra = (algorithm: LuaAlgorithm): boolean => algorithm.extra !== noExtra;

/**
 * ARGV entries per check (one per group): now ('' = Redis TIME), cost, and extra only for an algorithm that
 * takes one: every argument costs Redis a string to read and to make, for each check.
 */
const argsPerOne = (algorithm: LuaAlgorithm): number => (takesExtra(algorithm) ? 3 : 2);

/**
 * A group of one check decides alone: allowed, it commits; denied, there is nothing to write. So each check
 * writes as it is decided. The checks run under one pcall, not one each (a pcall per check cost about a tenth
 * of the check): a check that raises stops the run where it stands (a, k, r), fails its own group only, and the
 * run goes on from the next check. What only a failure needs (FAILURE) is defined where it is handled, and the
 * check's now is read in the loop, not by a function: a call that raises nothing makes neither.
 */
/**
 * The now sent at ARGV[at], in a local: whole ms, or Redis TIME (read once per call) for ''. Written out where
 * it is needed rather than a function: a function is made on every call.
 */
export const nowLua = (at: string): string => `local now = tonumber(ARGV[${at}])
    if now == nil then
      ${REDIS_NOW}
      now = redis_now
    else
      now = math.floor(now)
    end`;

/**
 * commit (see PRELUDE) written out, for an allowed check's write (the locals kind, k, x, y, z, w, v): one call
 * less per check. With keys all distinct (the local distinct), a state is written at once: no later check reads
 * it, and it spares the table of states (remember) its entries.
 */
export const commitLua = (algorithm: LuaAlgorithm): string => `if kind == 2 then
      if distinct then write_state(KEYS[k], x, y, false, z, w == true and KEEP_TTL)
      else remember(KEYS[k], x, y, false, z, w == true) end
    elseif kind == 3 then
      if distinct then write_state(KEYS[k], x, y, z, w, v == true and KEEP_TTL)
      else remember(KEYS[k], x, y, z, w, v == true) end
    ${algorithm.lua.includes('WRITERS.') ? 'else WRITERS[kind](k, x, y, z, w, v) end' : 'end'}`;

function mainOf(algorithm: LuaAlgorithm): string {
  const extra = takesExtra(algorithm) ? 'ARGV[a + 2]' : "''";
  const keys = algorithm.keys.length;
  const step = argsPerOne(algorithm);
  return `
local limit, window, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local distinct = ARGV[4] == '1'
local last = #ARGV
-- The next check: its first ARGV entry, its first KEYS entry, its place in the reply.
local a, k, r = ${HEAD_ARGS + 1}, 1, 0
local function run_checks()
  while a <= last do
    ${nowLua('a')}
    local allowed, lim, remaining, reset, retry, delay, kind, x, y, z, w, v = run(
      k, now, limit, window, burst, tonumber(ARGV[a + 1]), ${extra})
    if allowed then
      ${commitLua(algorithm)}
    end
    -- answer (see PRELUDE) written out: one call less per check.
    ${answerLua('lim', "''")}
    a, k, r = a + ${step}, k + ${keys}, r + ${RESULTS_PER_CHECK}
  end
end
while true do
  local ok, err = pcall(run_checks)
  if ok then break end
  ${FAILURE}
  raise_if_server_error(err)
  ${nowLua('a')}
  failed_answer(r, unreadable(run, k, ${keys}, now, limit, window, burst, tonumber(ARGV[a + 1]), ${extra}))
  a, k, r = a + ${step}, k + ${keys}, r + ${RESULTS_PER_CHECK}
end
flush_states()
return reply
`;
}

const scripts = new Map<string, RedisScript>();

/**
 * A lean script of an algorithm, made once per name: the prelude and the fragment, without what its loop
 * (`mainOf(algorithm)`) and the fragment never use, then the loop.
 */
export function leanScriptOf(
  name: string,
  algorithm: LuaAlgorithm,
  mainOf: (algorithm: LuaAlgorithm) => string,
): RedisScript {
  const made = scripts.get(name);
  if (made !== undefined) return made;
  const main = mainOf(algorithm);
  // The algorithm's function as a local (run), not an entry of the ALGORITHMS table: one table less per call.
  const fragment = algorithm.lua.replace(`ALGORITHMS.${algorithm.code} = function`, 'local run = function');
  if (fragment === algorithm.lua) throw new Error(`no ALGORITHMS.${algorithm.code} in its fragment`);
  const script = redisScript(
    name,
    compact([withoutUnused([PRELUDE, fragment].join('\n'), main), main].join('\n')),
  );
  scripts.set(name, script);
  return script;
}

/** The one-rule script of an algorithm: the prelude, its fragment, the loop over its checks. */
export const oneRuleScript = (algorithm: LuaAlgorithm): RedisScript =>
  leanScriptOf(`Evaluate_${algorithm.code}`, algorithm, mainOf);

const sameLimits = (a: LimitParams, b: LimitParams): boolean =>
  a === b || (a.limit === b.limit && a.windowMs === b.windowMs && a.burst === b.burst);

/**
 * The algorithm of a call the one-rule script can make: every group an evaluation of one check without a
 * policy, all of one algorithm and the same limits. Undefined when the general script is needed.
 */
export function oneRuleOf(groups: readonly Group[]): LuaAlgorithm | undefined {
  const first = groups[0]?.checks[0];
  if (first === undefined) return undefined;
  for (const group of groups) {
    if (group.refund === true || group.renew === true || group.checks.length !== 1) return undefined;
    const check = group.checks[0]!;
    if (check.policy !== undefined || check.algorithm !== first.algorithm) return undefined;
    if (!sameLimits(check.params, first.params)) return undefined;
  }
  return luaAlgorithms[first.algorithm];
}

/** numkeys, KEYS, then ARGV of a one-rule call (see mainOf), for groups oneRuleOf accepted. */
export function oneRuleArgv(
  groups: readonly Group[],
  algorithm: LuaAlgorithm,
  settings: CallSettings,
): (string | number)[] {
  const { params } = groups[0]!.checks[0]!;
  const keys: (string | number)[] = [groups.length * algorithm.keys.length];
  const args: (string | number)[] = [params.limit, params.windowMs, params.burst, '1'];
  const extra = takesExtra(algorithm);
  for (const group of groups) {
    const check = group.checks[0]!;
    for (const suffix of algorithm.keys) keys.push(keyOf(settings.prefix, check, suffix));
    args.push(settings.redisClock ? '' : group.now, check.cost);
    if (extra) args.push(algorithm.extra(check));
  }
  if (groups.length > 1 && new Set(keys).size < keys.length) args[3] = '0';
  for (const arg of args) keys.push(arg);
  return keys;
}

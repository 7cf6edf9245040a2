import { type Check, type CheckResult, counterKey, type LimitParams, StoreError } from '@sluice/core/store';
import { giveBackFragmentOf, type LuaAlgorithm, luaAlgorithms, renewFragment } from './algorithms/index.js';
import { KeyStateError } from './errors.js';
import { flagFields, OWE_POLICY, policySuffixes, policyText } from './policy.js';
import { ARGS_PER_CHECK, ARGS_PER_SPEC, FAILED, GROUP_ARGS, NEVER, RESULTS_PER_CHECK } from './script.js';
import type { StateFormat } from './stateFormat.js';

/**
 * The checks of one request (or of one Cluster slot of it), decided all-or-nothing in the evaluation
 * script. Several groups can share one script call; each keeps its own all-or-nothing.
 */
export interface Group {
  readonly checks: readonly Check[];
  /** Epoch ms of the request; ignored with the Redis clock. */
  readonly now: number;
  /** Gives back instead of deciding: each check runs its algorithm's give-back fragment (refund, lease release). */
  readonly refund?: boolean;
  /** Renews instead of deciding: each check is a held concurrency lease to extend (renewFragment). */
  readonly renew?: boolean;
}

/** How the store names keys and keeps time, as the call needs them. */
export interface CallSettings {
  readonly prefix: string;
  /** `true`: every group takes `now` from Redis TIME (read once per call). */
  readonly redisClock: boolean;
  /** How the scripts write counter states (see stateFormat.ts); default text. */
  readonly stateFormat?: StateFormat;
}

/** `<prefix>:{<tag>}:<rule>:<suffix>`: core's key format, the one `sluice explain` shows. */
export const keyOf = counterKey;

function fragmentOf(group: Group, check: Check): LuaAlgorithm {
  if (group.renew === true) return renewFragment;
  // A settle's charge above the estimate decides with the algorithm itself (see policy.ts, OWE_POLICY).
  if (check.policy === OWE_POLICY) return luaAlgorithms[check.algorithm];
  return group.refund === true ? giveBackFragmentOf(check.algorithm) : luaAlgorithms[check.algorithm];
}

/**
 * The specs of one call: each distinct (algorithm, mode, limits, policy) goes once, checks name it by
 * number. Checks of one rule share their params object (core compiles it once), so identity finds them.
 */
class Specs {
  /** The spec values, ARGS_PER_SPEC per spec, in number order. */
  readonly args: (string | number)[] = [];
  count = 0;
  readonly #byParams = new Map<
    LimitParams,
    { code: string; mode: string; policy: string; number: number }[]
  >();

  /** The 1-based number of the check's spec, added on first use; `keys`: how many KEYS a check of it uses. */
  numberOf(algorithm: LuaAlgorithm, check: Check, policy: string, keys: number): number {
    const { params, mode } = check;
    let known = this.#byParams.get(params);
    if (known === undefined) {
      known = [];
      this.#byParams.set(params, known);
    }
    for (const spec of known)
      if (spec.code === algorithm.code && spec.mode === mode && spec.policy === policy) return spec.number;
    this.count += 1;
    this.args.push(
      algorithm.code,
      keys,
      mode === 'enforce' ? '1' : '0',
      params.limit,
      params.windowMs,
      params.burst,
      policy,
    );
    known.push({ code: algorithm.code, mode, policy, number: this.count });
    return this.count;
  }
}

/** numkeys, KEYS, then ARGV of one evaluation script call (layout: see PRELUDE in script.ts). */
export function evaluateArgv(groups: readonly Group[], settings: CallSettings): (string | number)[] {
  const keys: (string | number)[] = [0];
  const specs = new Specs();
  const args: (string | number)[] = [groups.length];
  let checkCount = 0;
  for (const group of groups) {
    args.push(group.checks.length, settings.redisClock ? '' : group.now);
    for (const check of group.checks) {
      const algorithm = fragmentOf(group, check);
      for (const suffix of algorithm.keys) keys.push(keyOf(settings.prefix, check, suffix));
      let keyCount = algorithm.keys.length;
      let policy = '';
      // A rule's policy (bans, penalty, idempotency) adds its keys and its spec value; refunds take none.
      const decides = (group.refund !== true || check.policy === OWE_POLICY) && group.renew !== true;
      if (check.policy !== undefined && decides) {
        const suffixes = policySuffixes(check);
        for (const suffix of suffixes) keys.push(keyOf(settings.prefix, check, suffix));
        keyCount += suffixes.length;
        policy = policyText(check);
      }
      args.push(specs.numberOf(algorithm, check, policy, keyCount), check.cost, algorithm.extra(check));
    }
    checkCount += group.checks.length;
  }
  const expected = 1 + groups.length * GROUP_ARGS + checkCount * ARGS_PER_CHECK;
  if (args.length !== expected || specs.args.length !== specs.count * ARGS_PER_SPEC) {
    throw new Error('argument layout mismatch');
  }
  keys[0] = keys.length - 1;
  keys.push(specs.count);
  for (const arg of specs.args) keys.push(arg);
  for (const arg of args) keys.push(arg);
  return keys;
}

/** A group's answer: its results, or the error of a group whose state the script could not read. */
export type GroupAnswer = CheckResult[] | KeyStateError;

/** Splits the script's reply into each group's answer. */
export function parseReply(reply: unknown, groups: readonly Group[]): GroupAnswer[] {
  let checkCount = 0;
  for (const group of groups) checkCount += group.checks.length;
  if (!Array.isArray(reply) || reply.length !== checkCount * RESULTS_PER_CHECK) {
    throw new StoreError('ERR_SLUICE_STORE', 'unexpected reply from the Sluice script');
  }
  let at = 0;
  return groups.map((group) => {
    const start = at;
    at += group.checks.length * RESULTS_PER_CHECK;
    if (group.checks.length > 0 && reply[start] === FAILED) return failedGroup(reply, start, group);
    const results: CheckResult[] = new Array(group.checks.length);
    for (let i = 0; i < results.length; i++) results[i] = resultAt(reply, start + i * RESULTS_PER_CHECK);
    return results;
  });
}

/** The error of a failed group, naming the rules whose state was unreadable (flag after FAILED). */
function failedGroup(reply: readonly unknown[], start: number, group: Group): KeyStateError {
  const rules = new Set<string>();
  group.checks.forEach((check, i) => {
    if (reply[start + i * RESULTS_PER_CHECK + 1] === 1) rules.add(check.rule);
  });
  return new KeyStateError([...rules]);
}

/**
 * A reply number within [0, most]: a count or time read back from state that another tool wrote (past 2^53,
 * NaN) never reaches a header as a rounded or unprintable number.
 */
function bounded(value: unknown, most: number): number {
  const n = Number(value);
  if (!(n > 0)) return 0;
  return Math.min(n, most);
}

function resultAt(reply: readonly unknown[], at: number): CheckResult {
  const retry = Number(reply[at + 4]);
  const delay: unknown = reply[at + 5];
  const limit = bounded(reply[at + 1], Number.MAX_SAFE_INTEGER);
  const allowed = reply[at] === 1;
  // Up to the burst, which bucket algorithms allow above the limit: bounded as an exact number only.
  const remaining = bounded(reply[at + 2], Number.MAX_SAFE_INTEGER);
  const resetMs = bounded(reply[at + 3], Number.MAX_SAFE_INTEGER);
  const retryAfterMs = retry === NEVER ? Number.POSITIVE_INFINITY : bounded(retry, Number.MAX_SAFE_INTEGER);
  const result: CheckResult =
    delay === ''
      ? { allowed, limit, remaining, resetMs, retryAfterMs }
      : { allowed, limit, remaining, resetMs, retryAfterMs, delayMs: Number(delay) };
  const flag: unknown = reply[at + 6];
  return flag === '' ? result : { ...result, ...flagFields(flag) };
}

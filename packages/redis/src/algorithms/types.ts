import type { AlgorithmName, Check } from '@sluice/core';

/**
 * One algorithm as the Redis script runs it: a Lua fragment that registers `ALGORITHMS.<code>`, the
 * key suffixes it reads and writes, and how a check fills the `extra` argument.
 */
export interface LuaAlgorithm {
  readonly name: AlgorithmName;
  /** Short code: selects the Lua function and ends the key name. */
  readonly code: string;
  /** Key suffixes after `<prefix>:{<tag>}:<rule>:`, one KEYS entry each, in order. */
  readonly keys: readonly string[];
  /** The `extra` argument of a check (lease id, calendar period), '' when unused. */
  extra(check: Check): string;
  /**
   * The fragment. The function it registers is called as `(keys, now, p, cost)` and returns
   * `{allowed, limit, remaining, reset, retry, delay?, commit?}`; `commit` writes the state and runs
   * only when the whole call commits.
   */
  readonly lua: string;
}

/** For algorithms that take no extra argument. */
export const noExtra = (): string => '';

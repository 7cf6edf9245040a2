import type { AlgorithmName, Check } from '@sluice/core/store';

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
   * The fragment. The function it registers is called as `(k, now, limit, window, burst, cost, extra)`
   * (`k`: index in KEYS of the check's first key; `now`: whole ms) and returns plain values, no table:
   * `allowed, limit, remaining, reset, retry, delay` and, when allowed, the write to make if the request
   * commits: `kind, x, y, z, w, v` (see `commit` in the script: kind 2 or 3 sets the first key to that
   * many numbers, followed by the key's TTL and `true` when the TTL it has already ends there; a string
   * names a writer of `WRITERS`).
   */
  readonly lua: string;
}

/** For algorithms that take no extra argument. */
export const noExtra = (): string => '';

import type { Check } from '@sluice/core/store';
import { describe, expect, it } from 'vitest';
import { luaAlgorithms } from './algorithms/index.js';
import { oneRuleArgv } from './oneRuleScript.js';

const params = { limit: 10, windowMs: 1000, burst: 10 };
const check = (tag: string, rule = 'r'): Check => ({
  rule,
  tag,
  algorithm: 'fixed_window',
  params,
  cost: 1,
  mode: 'enforce',
});
/** The flag after limit, window and burst: '1' when no two checks of the call share a key. */
const distinctFlag = (...checks: Check[]) => {
  const argv = oneRuleArgv(
    checks.map((c) => ({ checks: [c], now: 5 })),
    luaAlgorithms.fixed_window,
    { prefix: 'p', redisClock: false },
  );
  return argv[1 + (argv[0] as number) + 3];
};

describe('oneRuleArgv', () => {
  it('says whether the checks of a call write distinct keys', () => {
    expect(distinctFlag(check('a'))).toBe('1');
    expect(distinctFlag(check('a'), check('b'), check('a', 'other rule'))).toBe('1');
    expect(distinctFlag(check('a'), check('b'), check('a'))).toBe('0');
  });
});

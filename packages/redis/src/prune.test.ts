import { ALGORITHM_NAMES } from '@sluice/core/store';
import { describe, expect, it } from 'vitest';
import { luaAlgorithms } from './algorithms/index.js';
import { oneRuleScript } from './oneRuleScript.js';
import { withoutUnused } from './prune.js';
import { EVALUATE_SCRIPT } from './script.js';

const defined = (lua: string): string[] =>
  [...lua.matchAll(/^local function (\w+)\(/gm)].map((match) => match[1]!);

describe('withoutUnused', () => {
  it('drops the definitions nothing uses, through chains of uses, and keeps the rest in order', () => {
    const pieces = [
      'local A = 1',
      'local unused_table, unused_count = {}, 0',
      '-- helper is named in a comment only: that does not keep it',
      'local function helper(x)',
      '  return x + A',
      'end',
      'local function dead(x)',
      '  return helper(x)',
      'end',
      'local function used(x)',
      '  return helper(x) * 2',
      'end',
      'ALGORITHMS.x = function() return used(1) end',
    ].join('\n');
    expect(withoutUnused(pieces, '-- dead\nreturn ALGORITHMS.x()')).toBe(
      [
        'local A = 1',
        'local function helper(x)',
        '  return x + A',
        'end',
        'local function used(x)',
        '  return helper(x) * 2',
        'end',
        'ALGORITHMS.x = function() return used(1) end',
      ].join('\n'),
    );
  });

  it('keeps a local whose value opens a table or function over several lines', () => {
    const pieces = ['local T = {', '  a = 1,', '}', 'local f = function()', '  return 1', 'end'].join('\n');
    expect(withoutUnused(pieces, 'return 0')).toBe(pieces);
  });
});

describe('the one-rule scripts', () => {
  it('define no function they never call, and none of the failure path', () => {
    for (const name of ALGORITHM_NAMES) {
      const lua = oneRuleScript(luaAlgorithms[name]).lua;
      const functions = defined(lua);
      for (const fn of functions) {
        const uses = lua.split('\n').filter((line) => new RegExp(`(?<![\\w.])${fn}\\b`).test(line));
        expect(uses.length, `${name}: ${fn}`).toBeGreaterThan(1);
      }
      // The failure path's functions are defined inside its branch, after the loop over the checks.
      expect(lua.indexOf('local function unreadable(')).toBeGreaterThan(lua.indexOf('pcall(run_checks)'));
      expect(functions.length).toBeLessThan(defined(EVALUATE_SCRIPT).length);
    }
  });

  it("fixed_window's carries none of the other algorithms' pieces", () => {
    const lua = oneRuleScript(luaAlgorithms.fixed_window).lua;
    for (const absent of ['read3', 'finite', 'POLICY', 'now_of', 'whole(', 'num(']) {
      expect(lua, absent).not.toContain(absent);
    }
  });
});

import { ALGORITHM_NAMES, descriptorOf } from '@sluice/core/store';
import { describe, expect, it } from 'vitest';
import { giveBackFragmentOf, luaAlgorithms, scriptFragments } from './index.js';

describe('the Lua registry', () => {
  it("has each algorithm's fragment under its own name", () => {
    for (const name of ALGORITHM_NAMES) expect(luaAlgorithms[name].name).toBe(name);
  });

  it('gives back what a request holds exactly for the algorithms whose descriptor releases something', () => {
    for (const name of ALGORITHM_NAMES) {
      if (descriptorOf(name).release === 'none') {
        expect(() => giveBackFragmentOf(name)).toThrow(/gives nothing back/);
        continue;
      }
      const fragment = giveBackFragmentOf(name);
      expect(fragment.name).toBe(name);
      expect(fragment.keys).toEqual(luaAlgorithms[name].keys);
      expect(fragment.code).not.toBe(luaAlgorithms[name].code);
    }
  });

  it('puts every fragment in the script once, each code distinct', () => {
    const codes = scriptFragments.map((fragment) => fragment.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const name of ALGORITHM_NAMES) expect(scriptFragments).toContain(luaAlgorithms[name]);
  });
});

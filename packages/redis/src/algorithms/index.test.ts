import { ALGORITHM_NAMES, descriptorOf } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { giveBackFragmentOf, luaAlgorithms, scriptFragments } from './index.js';

describe('the Lua registry', () => {
  it("has each algorithm's fragment under the code its descriptor names", () => {
    for (const name of ALGORITHM_NAMES) {
      expect(luaAlgorithms[name].name).toBe(name);
      expect(luaAlgorithms[name].code).toBe(descriptorOf(name).lua);
    }
  });

  it('gives back under the code the descriptor names: refundLua for refunds, releaseLua for leases', () => {
    for (const name of ALGORITHM_NAMES) {
      const descriptor = descriptorOf(name);
      const fragment = giveBackFragmentOf(name);
      expect(fragment.name).toBe(name);
      expect(fragment.keys).toEqual(luaAlgorithms[name].keys);
      if (descriptor.release === 'refund') expect(fragment.code).toBe(descriptor.refundLua);
      else if (descriptor.release === 'lease') expect(fragment.code).toBe(descriptor.releaseLua);
    }
  });

  it('puts every fragment in the script once, each code distinct', () => {
    const codes = scriptFragments.map((fragment) => fragment.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const name of ALGORITHM_NAMES) expect(scriptFragments).toContain(luaAlgorithms[name]);
  });
});

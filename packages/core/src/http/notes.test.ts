import { describe, expect, it } from 'vitest';
import type { CompiledRules } from '../rules/contract.js';
import { ALL_RULES, notesOf, remainingScope } from './notes.js';

const routeRules = {} as CompiledRules;
const otherRules = {} as CompiledRules;

describe('remainingScope', () => {
  it('checks a request once per limiter: a second global check has nothing left', () => {
    const notes = notesOf({}, Symbol('limiter'));
    expect(remainingScope(notes, ALL_RULES)).toBe(ALL_RULES);
    expect(remainingScope(notes, ALL_RULES)).toBeUndefined();
  });

  it("leaves nothing to a route's middleware when the global middleware checked its rules with the global ones", () => {
    const notes = notesOf({}, Symbol('limiter'));
    const together = { rules: routeRules };
    expect(remainingScope(notes, together)).toBe(together);
    expect(remainingScope(notes, { rules: routeRules, global: false })).toBeUndefined();
    // Another route's rules (a second limiter.route() on the same request) are still checked.
    expect(remainingScope(notes, { rules: otherRules, global: false })).toEqual({
      rules: otherRules,
      global: false,
    });
  });

  it("checks a route's rules alone after a global check without them", () => {
    const notes = notesOf({}, Symbol('limiter'));
    remainingScope(notes, ALL_RULES);
    const alone = { rules: routeRules, global: false };
    expect(remainingScope(notes, alone)).toBe(alone);
    // A global check with the same route rules afterwards has nothing left either.
    expect(remainingScope(notes, { rules: routeRules })).toBeUndefined();
  });

  it('keeps notes per limiter symbol, and none for a request that is not an object', () => {
    const req = {};
    const first = notesOf(req, Symbol('a'));
    expect(notesOf(req, Symbol('b'))).not.toBe(first);
    expect(remainingScope(notesOf('text', Symbol('a')), ALL_RULES)).toBe(ALL_RULES);
  });
});

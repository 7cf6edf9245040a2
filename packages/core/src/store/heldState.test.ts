import { describe, expect, it } from 'vitest';
import { heldAfter } from './heldState.js';

describe('heldAfter', () => {
  it("keeps the held object, with the new state's fields, when both have the same keys", () => {
    const held = { start: 60_000, count: 3 };
    const kept = heldAfter(held, { count: 4, start: 60_000 });
    expect(kept).toBe(held);
    expect(held).toEqual({ start: 60_000, count: 4 });
  });

  it('takes the new state when the held one has keys the new one lacks (another algorithm wrote it)', () => {
    const next = { tokens: 5, at: 1 };
    expect(heldAfter({ tokens: 4, at: 0, start: 0 }, next)).toBe(next);
  });

  it('takes the new state when it has keys the held one lacks', () => {
    const held = { start: 0, count: 1 };
    const next = { tokens: 5, at: 1 };
    expect(heldAfter(held, next)).toBe(next);
  });

  it('takes the new value when either is not a plain object', () => {
    const record = { count: 1 };
    expect(heldAfter(undefined, record)).toBe(record);
    expect(heldAfter(true, record)).toBe(record);
    expect(heldAfter(record, 7)).toBe(7);
    const entries = { entries: [1, 2] };
    expect(heldAfter([1], entries)).toBe(entries);
    const list = [3];
    expect(heldAfter({ 0: 1 }, list)).toBe(list);
  });

  it('leaves an object written over itself as it is', () => {
    const held = { start: 0, count: 2 };
    expect(heldAfter(held, held)).toBe(held);
    expect(held).toEqual({ start: 0, count: 2 });
  });
});

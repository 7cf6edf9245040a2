import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, retryDelay } from './backoff.js';

const input = { jitterMs: 1000, backoff: DEFAULT_BACKOFF };

describe('retryDelay', () => {
  it("adds a random part of the jitter to the server's wait", () => {
    expect(retryDelay({ ...input, serverWaitMs: 3000, attempt: 1, random: () => 0 })).toBe(3000);
    expect(retryDelay({ ...input, serverWaitMs: 3000, attempt: 1, random: () => 0.5 })).toBe(3500);
  });

  it('draws below a doubling ceiling, capped, when the server names no wait', () => {
    const top = () => 0.999_999;
    const ceilings = [1, 2, 3, 4, 5, 6, 7].map((attempt) =>
      Math.round(retryDelay({ ...input, serverWaitMs: undefined, attempt, random: top })),
    );
    expect(ceilings).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(retryDelay({ ...input, serverWaitMs: undefined, attempt: 3, random: () => 0.25 })).toBe(500);
  });
});

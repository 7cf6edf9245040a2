import { describe, expect, it } from 'vitest';
import { HALF_LIFE_MS, MULTIPLIER, TimeLimit } from './timeLimit.js';

describe('TimeLimit', () => {
  it('starts at the floor and stays there while answers are quick', () => {
    const limit = new TimeLimit(20, 250);
    expect(limit.ms).toBe(20);
    for (let at = 0; at < 1000; at += 10) limit.observe(2, at);
    expect(limit.ms).toBe(20);
  });

  it('follows a slow answer to MULTIPLIER times it, at most the ceiling', () => {
    const limit = new TimeLimit(20, 250);
    limit.observe(30, 0);
    expect(limit.ms).toBe(MULTIPLIER * 30);
    limit.observe(200, 1);
    expect(limit.ms).toBe(250);
  });

  it('keeps the recent peak, halving every HALF_LIFE_MS, back to the floor when answers are quick again', () => {
    const limit = new TimeLimit(20, 250);
    limit.observe(40, 0);
    limit.observe(1, 10); // a quick answer right after does not drop the limit
    expect(limit.ms).toBeGreaterThanOrEqual(MULTIPLIER * 39);
    limit.observe(1, 10 + HALF_LIFE_MS);
    expect(limit.ms).toBe(Math.ceil(MULTIPLIER * 40 * 0.5 ** (HALF_LIFE_MS / HALF_LIFE_MS)));
    limit.observe(1, 10 + 5 * HALF_LIFE_MS);
    expect(limit.ms).toBe(20);
  });

  it('a ceiling equal to the floor is a fixed limit', () => {
    const limit = new TimeLimit(20);
    expect(limit.adaptive).toBe(false);
    limit.observe(500, 0);
    expect(limit.ms).toBe(20);
  });
});

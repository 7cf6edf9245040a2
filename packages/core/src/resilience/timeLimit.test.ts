import { describe, expect, it } from 'vitest';
import { TimeLimit } from './timeLimit.js';

describe('TimeLimit', () => {
  it('gives the ceiling while the store answers, late answers included', () => {
    const limit = new TimeLimit(20, 1000);
    expect(limit.ms).toBe(1000);
    limit.answered();
    expect(limit.ms).toBe(1000);
  });

  it('gives the floor once a call timed out, until any answer comes back', () => {
    const limit = new TimeLimit(20, 1000);
    limit.timedOut();
    expect(limit.suspect).toBe(true);
    expect(limit.ms).toBe(20);
    limit.timedOut();
    expect(limit.ms).toBe(20);
    limit.answered();
    expect(limit.suspect).toBe(false);
    expect(limit.ms).toBe(1000);
  });

  it('a ceiling equal to the floor is a fixed limit', () => {
    const limit = new TimeLimit(20);
    expect(limit.adaptive).toBe(false);
    limit.timedOut();
    expect(limit.suspect).toBe(false);
    expect(limit.ms).toBe(20);
  });

  it('a ceiling below the floor is raised to it', () => {
    expect(new TimeLimit(50, 10).ceilingMs).toBe(50);
  });
});

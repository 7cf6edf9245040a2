import { describe, expect, it } from 'vitest';
import type { BanPolicy } from '../rules/contract.js';
import { banLeftMs, banLengthMs, longestBanMs, recordViolation } from './policies.js';

const POLICY: BanPolicy = { after: 2, withinMs: 1000, forMs: 10_000, escalateMs: [60_000, 600_000] };

describe('ban lengths', () => {
  it('are for, then each escalate step, the last repeating; without escalate, always for', () => {
    expect([1, 2, 3, 4, 9].map((level) => banLengthMs(POLICY, level))).toEqual([
      10_000, 60_000, 600_000, 600_000, 600_000,
    ]);
    expect(banLengthMs({ after: 1, withinMs: 1, forMs: 5 }, 3)).toBe(5);
    expect(longestBanMs(POLICY)).toBe(600_000);
  });
});

describe('recordViolation', () => {
  it('counts within `within` of the first denial, bans at `after`, and starts the count afresh', () => {
    const first = recordViolation(undefined, POLICY, 0);
    expect(first).toMatchObject({ started: false, state: { count: 1, since: 0, level: 0 }, ttlMs: 1000 });
    const second = recordViolation(first.state, POLICY, 999);
    expect(second).toMatchObject({ started: true, state: { count: 0, until: 10_999, level: 1 } });
    // The level is remembered for the longest ban after the ban ends, and the TTL says so.
    expect(second.state.levelUntil).toBe(10_999 + 600_000);
    expect(second.ttlMs).toBe(10_000 + 600_000);
    const late = recordViolation(first.state, POLICY, 1000);
    expect(late.state).toMatchObject({ count: 1, since: 1000 });
  });

  it('forgets the escalation level once its memory has passed', () => {
    const state = { count: 1, since: 700_000, until: 0, level: 3, levelUntil: 700_000 };
    expect(recordViolation(state, POLICY, 700_001).state).toMatchObject({
      until: 700_001 + 10_000,
      level: 1,
    });
    const kept = { ...state, levelUntil: 800_000 };
    expect(recordViolation(kept, POLICY, 700_001).state).toMatchObject({
      until: 700_001 + 600_000,
      level: 4,
    });
  });
});

describe('banLeftMs', () => {
  it('is the rest of the ban, never more than the longest ban (a clock that stepped back)', () => {
    const state = { count: 0, since: 0, until: 50_000, level: 1, levelUntil: 650_000 };
    expect(banLeftMs(state, POLICY, 40_000)).toBe(10_000);
    expect(banLeftMs(state, POLICY, 50_000)).toBe(0);
    expect(banLeftMs(state, POLICY, -10_000_000)).toBe(600_000);
    expect(banLeftMs(undefined, POLICY, 0)).toBe(0);
  });
});

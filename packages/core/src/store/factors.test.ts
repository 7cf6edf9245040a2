import { describe, expect, it } from 'vitest';
import { ADAPTIVE_DEFAULTS } from '../rules/adaptivePolicy.js';
import type { AdaptivePolicy } from '../rules/adaptiveTypes.js';
import type { FactorReport } from './contract.js';
import {
  adaptFactor,
  type FactorState,
  freshFactor,
  nextFactor,
  QUIET_INTERVALS,
  unhealthy,
} from './factors.js';

const policy: AdaptivePolicy = { ...ADAPTIVE_DEFAULTS, errorRate: 0.1, minSamples: 10 };

function report(requests: number, errors: number, slow = 0, over: AdaptivePolicy = policy): FactorReport {
  return { id: 'd/r', policy: over, requests, errors, slow };
}

const gathered = (requests: number, errors: number, slow = 0): FactorState => ({
  ...freshFactor(0),
  requests,
  errors,
  slow,
});

describe('unhealthy', () => {
  it('judges the error rate against its target, strictly above it', () => {
    expect(unhealthy(gathered(100, 10), policy)).toBe(false);
    expect(unhealthy(gathered(100, 11), policy)).toBe(true);
  });

  it('proves nothing bad with fewer responses than min_samples', () => {
    expect(unhealthy(gathered(9, 9), policy)).toBe(false);
  });

  it('reads a latency percentile as the share of slow responses it allows (p99: 1%)', () => {
    const p99: AdaptivePolicy = { ...policy, errorRate: undefined, latency: { percentile: 99, maxMs: 500 } };
    expect(unhealthy(gathered(1000, 500, 10), p99)).toBe(false);
    expect(unhealthy(gathered(1000, 0, 11), p99)).toBe(true);
  });
});

describe('nextFactor', () => {
  it('multiplies down to the floor and adds up to 1', () => {
    expect(nextFactor(1, true, policy)).toBe(0.5);
    expect(nextFactor(0.15, true, policy)).toBe(policy.floor);
    expect(nextFactor(0.5, false, policy)).toBeCloseTo(0.6);
    expect(nextFactor(0.95, false, policy)).toBe(1);
  });
});

describe('adaptFactor', () => {
  it('adds reports up within an interval and judges them once when it has run', () => {
    let state = adaptFactor(undefined, report(20, 5), 0);
    state = adaptFactor(state, report(20, 5), 500);
    expect(state).toMatchObject({ factor: 1, requests: 40, errors: 10 });
    state = adaptFactor(state, report(0, 0), 1000);
    expect(state).toEqual({ factor: 0.5, since: 1000, requests: 0, errors: 0, slow: 0 });
  });

  it('climbs back additively after healthy intervals', () => {
    let state: FactorState = { ...freshFactor(0), factor: 0.1 };
    state = adaptFactor(state, report(100, 0), 1000);
    expect(state.factor).toBeCloseTo(0.2);
    state = adaptFactor(state, report(100, 0), 2000);
    expect(state.factor).toBeCloseTo(0.3);
  });

  it('gathers on past the interval until min_samples responses, then judges them together', () => {
    // At the floor a limit may let fewer than min_samples through in one interval: still judged, later.
    let state: FactorState = { ...freshFactor(0), factor: 0.1 };
    state = adaptFactor(state, report(6, 2), 1000);
    expect(state).toMatchObject({ factor: 0.1, since: 0, requests: 6 });
    state = adaptFactor(state, report(6, 2), 2000);
    expect(state).toMatchObject({ factor: 0.1, since: 2000, requests: 0 });
  });

  it('judges a quiet rule as healthy after QUIET_INTERVALS, so a backend nobody calls climbs back', () => {
    const quiet = { ...freshFactor(0), factor: 0.1 };
    expect(adaptFactor(quiet, report(1, 1), (QUIET_INTERVALS - 1) * 1000).factor).toBe(0.1);
    expect(adaptFactor(quiet, report(1, 1), QUIET_INTERVALS * 1000).factor).toBeCloseTo(0.2);
  });

  it('takes a pin (a breaker) at once, within [floor, 1], and restarts the interval', () => {
    const state = adaptFactor(gathered(50, 50), { ...report(5, 5), pin: 0.01 }, 300);
    expect(state).toEqual({ factor: policy.floor, since: 300, requests: 0, errors: 0, slow: 0 });
  });

  it('judges nothing while a clock steps back', () => {
    const state = adaptFactor({ ...freshFactor(5000) }, report(100, 100), 1000);
    expect(state.factor).toBe(1);
    expect(state.requests).toBe(100);
  });

  it('takes a backend failing 30% to the floor, then back to 1 once it heals', () => {
    let now = 0;
    let state = adaptFactor(undefined, report(0, 0), now);
    const factors: number[] = [];
    for (let i = 0; i < 6; i++) {
      now += 1000;
      state = adaptFactor(state, report(100, 30), now);
      factors.push(state.factor);
    }
    expect(factors).toEqual([0.5, 0.25, 0.125, 0.1, 0.1, 0.1]);
    for (let i = 0; i < 9; i++) {
      now += 1000;
      state = adaptFactor(state, report(100, 0), now);
    }
    expect(state.factor).toBeCloseTo(1);
  });
});

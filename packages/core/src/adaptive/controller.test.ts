import { describe, expect, it } from 'vitest';
import type { Decision, RuleResult } from '../observe/contract.js';
import { ADAPTIVE_DEFAULTS } from '../rules/adaptivePolicy.js';
import type { AdaptivePolicy, PriorityClass } from '../rules/adaptiveTypes.js';
import type { CompiledRule } from '../rules/contract.js';
import type { FactorReport, FactorStore } from '../store/contract.js';
import { MemoryFactors } from '../store/memoryFactors.js';
import { AdaptiveControl, type AdaptiveObserver, REPORT_EVERY_MS } from './controller.js';

const policy: AdaptivePolicy = { ...ADAPTIVE_DEFAULTS, errorRate: 0.1, minSamples: 10 };

function rule(name: string, extra: Partial<CompiledRule> = {}): CompiledRule {
  return {
    name,
    match: {},
    key: [],
    global: true,
    algorithm: 'fixed_window',
    params: { limit: 100, windowMs: 1000, burst: 100 },
    mode: 'enforce',
    rollout: 100,
    onStoreError: 'allow',
    scope: 'store',
    ...extra,
  };
}

const payments = rule('payments', { adaptive: policy });

/** Records what the controller reports and tells. */
function setup(factors: FactorStore = new MemoryFactors()) {
  const reports: FactorReport[] = [];
  const told: [string, number][] = [];
  const sheds: [string, PriorityClass][] = [];
  const observer: AdaptiveObserver = {
    onAdaptiveFactor: (name, factor) => told.push([name, factor]),
    onShed: (name, cls) => sheds.push([name, cls]),
  };
  const recording: FactorStore = {
    adaptFactor(report, now) {
      reports.push(report);
      return factors.adaptFactor(report, now);
    },
  };
  const control = new AdaptiveControl({ factors: recording, observer, domain: () => 'api' });
  return { control, reports, told, sheds };
}

function result(name: string, allowed: boolean, over: Partial<RuleResult> = {}): RuleResult {
  return {
    rule: name,
    mode: 'enforce',
    allowed,
    limit: 100,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: 0,
    windowMs: 1000,
    shadowDenied: false,
    failed: false,
    ...over,
  };
}

function decision(results: RuleResult[]): Decision {
  const allowed = results.every((r) => r.allowed);
  return {
    allowed,
    retryAfterMs: 0,
    delayMs: 0,
    limit: 100,
    remaining: 0,
    resetMs: 0,
    failedOpen: false,
    reason: allowed ? 'allowed' : 'limit',
    results,
    leases: [],
    version: 'v',
  };
}

/** Drives `count` responses of which `errors` fail through the controller, one interval from `start`. */
function serve(control: AdaptiveControl, start: number, count: number, errors: number): void {
  for (let i = 0; i < count; i++) {
    const now = start + Math.floor((i * policy.intervalMs) / count);
    control.paramsFor(payments, payments.params, {}, now);
    control.observe(['payments'], i < errors ? 503 : 200, 5, now);
  }
}

describe('AdaptiveControl', () => {
  it('scales an adaptive rule by its factor, which drops after an interval of 30% errors', () => {
    const { control, told } = setup();
    expect(control.paramsFor(payments, payments.params, {}, 0)).toBe(payments.params);
    serve(control, 0, 100, 30);
    serve(control, 1000, 100, 30);
    expect(control.factorOf('payments')).toBe(0.5);
    expect(control.paramsFor(payments, payments.params, {}, 1990).limit).toBe(50);
    expect(told[0]).toEqual(['payments', 0.5]);
  });

  it('counts responses slower than the latency target: a p90 over it lowers the factor', () => {
    const { control } = setup();
    const slowRule = rule('slow', {
      adaptive: { ...policy, errorRate: undefined, latency: { percentile: 90, maxMs: 300 } },
    });
    for (let second = 0; second < 2; second++) {
      for (let i = 0; i < 100; i++) {
        const now = second * 1000 + i * 10;
        control.paramsFor(slowRule, slowRule.params, {}, now);
        // 11% slower than 300 ms: the 90th percentile is over the target; 500s do not count here.
        control.observe(['slow'], 500, i < 11 ? 301 : 300, now);
      }
    }
    control.paramsFor(slowRule, slowRule.params, {}, 2000);
    // Two slow intervals judged: 1 x 0.5 x 0.5.
    expect(control.factorOf('slow')).toBe(0.25);
  });

  it('reports a rule at most every REPORT_EVERY_MS, never per request', () => {
    const { control, reports } = setup();
    serve(control, 0, 1000, 0);
    expect(reports.length).toBeLessThanOrEqual(policy.intervalMs / REPORT_EVERY_MS + 1);
    // Reports at 0, 250, 500 and 750 ms carry every response before 750 ms; the rest wait for the next one.
    expect(reports.reduce((sum, r) => sum + r.requests, 0)).toBe(750);
    expect(reports[0]?.id).toBe('api/payments');
  });

  it('lets a breaker set the floor (open), midway (half_open), then AIMD go on from there (closed)', () => {
    const { control, reports } = setup();
    control.setBreaker('payments', policy, 'open', 0);
    expect(control.factorOf('payments')).toBe(policy.floor);
    expect(reports.at(-1)?.pin).toBe(policy.floor);
    control.setBreaker('payments', policy, 'half_open', 10);
    expect(control.factorOf('payments')).toBeCloseTo(0.55);
    control.setBreaker('payments', policy, 'closed', 20);
    expect(control.factorOf('payments')).toBeCloseTo(0.55);
    serve(control, 1100, 100, 0);
    expect(control.factorOf('payments')).toBeCloseTo(0.65);
    serve(control, 2100, 100, 0);
    expect(control.factorOf('payments')).toBeCloseTo(0.75);
  });

  it('marks allowed decisions through adaptive rules for observation, and only those', () => {
    const { control } = setup();
    const plain = decision([result('other', true)]);
    expect(control.settled(plain, {})).toBe(plain);
    control.paramsFor(payments, payments.params, {}, 0);
    expect(control.settled(decision([result('payments', true), result('other', true)]), {}).adaptive).toEqual(
      ['payments'],
    );
  });

  it('counts a denial by a rule under pressure as a shed of the request class', () => {
    const { control, sheds } = setup();
    const tiered = rule('tiered', { adaptive: policy, priority: { class: 'normal', descriptor: 'tier' } });
    control.setBreaker('tiered', policy, 'open', 0);
    control.paramsFor(tiered, tiered.params, { tier: 'sheddable' }, 1);
    expect(control.paramsFor(tiered, tiered.params, { tier: 'sheddable' }, 1).limit).toBe(0);
    expect(control.paramsFor(tiered, tiered.params, { tier: 'critical' }, 1).limit).toBe(31);
    control.settled(decision([result('tiered', false)]), { tier: 'sheddable' });
    control.settled(decision([result('tiered', false, { mode: 'shadow' })]), { tier: 'critical' });
    expect(sheds).toEqual([['tiered', 'sheddable']]);
  });

  it('keeps the last factor when the store fails, and reports again later', async () => {
    let fail = true;
    const flaky: FactorStore = {
      adaptFactor: (report, now) =>
        fail
          ? Promise.reject(new Error('down'))
          : Promise.resolve(new MemoryFactors().adaptFactor(report, now)),
    };
    const { control, reports } = setup(flaky);
    control.setBreaker('payments', policy, 'open', 0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(control.factorOf('payments')).toBe(policy.floor);
    fail = false;
    control.setBreaker('payments', policy, 'closed', 1);
    control.paramsFor(payments, payments.params, {}, 1 + REPORT_EVERY_MS);
    expect(reports).toHaveLength(2);
  });
});

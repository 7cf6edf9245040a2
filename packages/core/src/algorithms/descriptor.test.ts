import { describe, expect, it } from 'vitest';
import { checkRule } from '../rules/check.js';
import { ALGORITHMS, ruleSchema } from '../rules/schema.js';
import {
  ALGORITHM_NAMES,
  type AlgorithmDescriptor,
  type AlgorithmName,
  algorithms,
  decideByName,
  type HeldLease,
  releasedState,
} from './index.js';
import type { LimitParams, Outcome } from './limits.js';

const PARAMS: LimitParams = { limit: 2, windowMs: 1000, burst: 2 };
const T = Date.UTC(2026, 0, 1);

/** A whole decide for the descriptors below: allows everything, keeps no state worth reading. */
function allowAll(
  _state: { n: number } | undefined,
  _now: number,
  params: LimitParams,
): Outcome<{ n: number }> {
  return {
    allowed: true,
    state: { n: 1 },
    limit: params.limit,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: 0,
    ttlMs: 1,
  };
}

const traits = {
  limit: 'requests',
  burst: false,
  calendar: false,
  leasable: true,
  isState: (value: unknown): value is { n: number } => typeof value === 'object' && value !== null,
  decide: allowAll,
} as const;

describe('algorithm descriptors', () => {
  it('the type system refuses an incomplete descriptor', () => {
    // A complete one compiles.
    const complete: AlgorithmDescriptor<'ninth', { n: number }> = {
      name: 'ninth',
      ...traits,
      release: 'none',
    };
    // @ts-expect-error a lease-holding algorithm must say how a lease is released (releaseLease, withLease)
    const noRelease: AlgorithmDescriptor<'ninth', { n: number }> = {
      name: 'ninth',
      ...traits,
      release: 'lease',
    };
    // @ts-expect-error a refunding algorithm must give its refund
    const noRefund: AlgorithmDescriptor<'ninth', { n: number }> = {
      name: 'ninth',
      ...traits,
      release: 'refund',
    };
    const { isState: _, ...withoutGuard } = traits;
    // @ts-expect-error every algorithm has a state guard
    const noGuard: AlgorithmDescriptor<'ninth', { n: number }> = {
      name: 'ninth',
      ...withoutGuard,
      release: 'none',
    };
    // @ts-expect-error a name outside the registry is not an AlgorithmName
    const unknownName: AlgorithmName = 'ninth';
    expect([complete, noRelease, noRefund, noGuard, unknownName]).toHaveLength(5);
  });

  it('registers each algorithm under its own name, in the order the docs list them', () => {
    expect(ALGORITHM_NAMES).toEqual([
      'fixed_window',
      'first_request_window',
      'sliding_window',
      'sliding_log',
      'token_bucket',
      'gcra',
      'leaky_bucket',
      'concurrency',
      'quota',
    ]);
    for (const name of ALGORITHM_NAMES) expect(algorithms[name].name).toBe(name);
  });

  it('gives the rules schema its algorithm enum', () => {
    expect(ALGORITHMS).toBe(ALGORITHM_NAMES);
    const parsed = ruleSchema.safeParse({
      name: 'r',
      key: ['ip'],
      limit: { requests: 1, per: '1s' },
      algorithm: 'ninth',
    });
    expect(parsed.success).toBe(false);
  });

  it('each state guard accepts its own states and refuses the others', () => {
    const states = new Map<AlgorithmName, unknown>();
    for (const name of ALGORITHM_NAMES) {
      const params = algorithms[name].limit === 'concurrent' ? { ...PARAMS, windowMs: 60_000 } : PARAMS;
      states.set(name, decideByName(name, undefined, T, params, 1, 'lease-1').state);
    }
    for (const name of ALGORITHM_NAMES) {
      expect(algorithms[name].isState(states.get(name))).toBe(true);
      expect(algorithms[name].isState(undefined)).toBe(false);
      expect(algorithms[name].isState([1, 2])).toBe(false);
    }
    // Distinct shapes are told apart (fixed_window and quota share one, as gcra and leaky_bucket do).
    expect(algorithms.concurrency.isState(states.get('sliding_window'))).toBe(false);
    expect(algorithms.sliding_log.isState(states.get('token_bucket'))).toBe(false);
    expect(algorithms.gcra.isState(states.get('fixed_window'))).toBe(false);
  });

  it('gives a lease-holding algorithm its lease id, and releases it by that id', () => {
    const concurrency = algorithms.concurrency;
    expect(concurrency.release).toBe('lease');
    const taken = decideByName('concurrency', undefined, T, { ...PARAMS, windowMs: 60_000 }, 1, 'mine');
    expect(concurrency.isState(taken.state) && taken.state.leases.map((lease) => lease.id)).toEqual(['mine']);
    if (concurrency.release !== 'lease' || !concurrency.isState(taken.state)) throw new Error('unreachable');
    expect(concurrency.releaseLease(taken.state, 'mine', T + 1).leases).toEqual([]);
  });

  it('the rules checks read the traits: burst, calendar periods, concurrent limits and batches', () => {
    const findings = (rule: Record<string, unknown>) =>
      checkRule(ruleSchema.parse({ name: 'r', key: ['ip'], ...rule }), ['rules', 0]).map((f) => f.message);
    for (const name of ALGORITHM_NAMES) {
      const descriptor = algorithms[name];
      if (descriptor.limit === 'concurrent') {
        expect(findings({ algorithm: name, limit: { concurrent: 2 } })).toEqual([]);
        continue;
      }
      const burst = findings({ algorithm: name, limit: { requests: 2, per: '1s', burst: 4 } });
      expect(burst.some((m) => m.startsWith('burst only applies'))).toBe(!descriptor.burst);
      const calendar = findings({ algorithm: name, limit: { requests: 2, per: 'day' } });
      expect(calendar.some((m) => m.includes('calendar period'))).toBe(!descriptor.calendar);
      const batch = findings({ algorithm: name, limit: { requests: 8, per: '1s' }, lease: { batch: 2 } });
      expect(batch.some((m) => m.startsWith('lease only applies'))).toBe(!descriptor.leasable);
    }
  });

  it('releasedState asks the algorithm of the lease: a lease dropped, queued units refunded, other states left alone', () => {
    const leaseParams = { ...PARAMS, windowMs: 60_000 };
    const held = decideByName('concurrency', undefined, T, leaseParams, 1, 'mine').state;
    const lease = { rule: 'r', tag: 't', id: 'mine', scope: 'store' as const };
    expect(releasedState(held, { ...lease, algorithm: 'concurrency' }, T + 1)).toEqual({
      state: { leases: [] },
    });
    // The one fallback, for untyped code: a lease that does not name its algorithm goes to concurrency.
    expect(releasedState(held, lease as unknown as HeldLease, T + 1)).toEqual({ state: { leases: [] } });
    // Not a concurrency state (the rule now counts with another algorithm): nothing to change.
    const window = decideByName('sliding_window', undefined, T, PARAMS, 1).state;
    expect(releasedState(window, { ...lease, algorithm: 'concurrency' }, T + 1)).toBeUndefined();
    expect(releasedState(undefined, { ...lease, algorithm: 'concurrency' }, T + 1)).toBeUndefined();

    // Two units queued in a leaky bucket; one given back leaves the queue as after one request.
    const one = decideByName('leaky_bucket', undefined, T, PARAMS, 1);
    const two = decideByName('leaky_bucket', one.state, T, PARAMS, 1);
    expect(two.delayMs).toBeGreaterThan(0);
    const refund = { ...lease, id: '', refund: { cost: 1, params: PARAMS } };
    const given = releasedState(two.state, { ...refund, algorithm: 'leaky_bucket' }, T);
    expect(given).toEqual({ state: one.state, ttlMs: one.ttlMs });
    expect(releasedState(two.state, refund as unknown as HeldLease, T)).toEqual(given); // a refund: leaky_bucket
    expect(releasedState(two.state, { ...refund, algorithm: 'fixed_window' }, T)).toBeUndefined();
  });
});

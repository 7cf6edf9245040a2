import { describe, expect, it } from 'vitest';
import type { Decision } from '../observe/contract.js';
import { allowVerdict } from './verdict.js';

const clock = () => 0;

function decision(leases: number, adaptive?: readonly string[]): Decision {
  return {
    adaptive,
    allowed: true,
    rule: undefined,
    limit: Number.POSITIVE_INFINITY,
    remaining: Number.POSITIVE_INFINITY,
    resetMs: 0,
    delayMs: 0,
    results: [],
    leases: Array.from({ length: leases }, () => ({})),
  } as unknown as Decision;
}

describe('allowVerdict', () => {
  it('gives leases back once however often release is called, and reports a failed release', async () => {
    let releases = 0;
    const reported: string[] = [];
    const limiter = {
      release: () => {
        releases += 1;
        return Promise.reject(new Error('store down'));
      },
      cancel: () => Promise.resolve(),
    };
    const verdict = allowVerdict(decision(1), undefined, 'draft', clock, limiter, (_error, stage) =>
      reported.push(stage),
    );
    if (verdict.action !== 'allow') throw new Error('expected allow');
    await verdict.release();
    await verdict.release();
    expect(releases).toBe(1);
    expect(reported).toEqual(['release']);
  });

  it('shares no-op release and cancel when the decision holds no lease', () => {
    const limiter = { release: () => Promise.resolve(), cancel: () => Promise.resolve() };
    const first = allowVerdict(decision(0), undefined, 'draft', clock, limiter, () => {});
    const second = allowVerdict(decision(0), undefined, 'draft', clock, limiter, () => {});
    if (first.action !== 'allow' || second.action !== 'allow') throw new Error('expected allow');
    expect(first.release).toBe(second.release);
  });

  it('asks to hear how the response ends only when the decision holds something or adapts', () => {
    const limiter = { release: () => Promise.resolve(), cancel: () => Promise.resolve() };
    const quiet = allowVerdict(decision(0), undefined, 'draft', clock, limiter, () => {});
    const holding = allowVerdict(decision(1), undefined, 'draft', clock, limiter, () => {});
    const adapting = allowVerdict(decision(0, ['api']), undefined, 'draft', clock, limiter, () => {});
    if (quiet.action !== 'allow' || holding.action !== 'allow' || adapting.action !== 'allow')
      throw new Error('expected allow');
    expect(quiet.onResponse).toBeUndefined();
    expect(holding.onResponse).toBeTypeOf('function');
    expect(adapting.onResponse).toBeTypeOf('function');
  });

  it('hands the status to release once, and status and latency (delay left out) to the adaptive rules', () => {
    let now = 1000;
    const released: (number | undefined)[] = [];
    const observed: [number, number][] = [];
    const limiter = {
      release: (_decision: Decision, status?: number) => {
        released.push(status);
        return Promise.resolve();
      },
      cancel: () => Promise.resolve(),
      observe: (_decision: Decision, status: number, latencyMs: number) => observed.push([status, latencyMs]),
    };
    const held = { ...decision(1, ['api']), delayMs: 50 };
    const verdict = allowVerdict(
      held,
      undefined,
      'draft',
      () => now,
      limiter,
      () => {},
    );
    if (verdict.action !== 'allow' || verdict.onResponse === undefined)
      throw new Error('expected a listener');
    now = 1250;
    verdict.onResponse(401);
    verdict.onResponse(200);
    expect(released).toEqual([401]);
    expect(observed).toEqual([[401, 200]]);
  });

  it('an aborted response (no status) releases without a status and feeds no adaptive rule', () => {
    const released: (number | undefined)[] = [];
    const observed: number[] = [];
    const limiter = {
      release: (_decision: Decision, status?: number) => {
        released.push(status);
        return Promise.resolve();
      },
      cancel: () => Promise.resolve(),
      observe: (_decision: Decision, status: number) => observed.push(status),
    };
    const verdict = allowVerdict(decision(1, ['api']), undefined, 'draft', clock, limiter, () => {});
    if (verdict.action !== 'allow' || verdict.onResponse === undefined)
      throw new Error('expected a listener');
    verdict.onResponse(undefined);
    expect(released).toEqual([undefined]);
    expect(observed).toEqual([]);
  });
});

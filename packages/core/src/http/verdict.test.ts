import { describe, expect, it } from 'vitest';
import type { Decision } from '../types.js';
import { allowVerdict } from './verdict.js';

const clock = () => 0;

function decision(leases: number): Decision {
  return {
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
});

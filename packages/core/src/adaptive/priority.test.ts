import { describe, expect, it } from 'vitest';
import { classOf, SHEDDABLE_LEASE_SHARE, scaled, scaledParams, shareOf } from './priority.js';

describe('classOf', () => {
  it('is normal without a policy, the rule class otherwise', () => {
    expect(classOf(undefined, {})).toBe('normal');
    expect(classOf({ class: 'sheddable' }, { priority: 'critical' })).toBe('sheddable');
  });

  it('reads the named descriptor when it names a class, the default when not', () => {
    const policy = { class: 'normal', descriptor: 'tier' } as const;
    expect(classOf(policy, { tier: 'critical' })).toBe('critical');
    expect(classOf(policy, { tier: 'sheddable' })).toBe('sheddable');
    expect(classOf(policy, { tier: 'gold' })).toBe('normal');
    expect(classOf(policy, {})).toBe('normal');
  });
});

describe('shareOf', () => {
  it('gives critical √f, normal f, sheddable f² (nothing below shed_below)', () => {
    expect(shareOf('critical', 0.25, 0.5, false)).toBe(0.5);
    expect(shareOf('normal', 0.25, 0.5, false)).toBe(0.25);
    expect(shareOf('sheddable', 0.6, 0.5, false)).toBeCloseTo(0.36);
    expect(shareOf('sheddable', 0.4, 0.5, false)).toBe(0);
  });

  it('keeps sheddable <= normal <= critical at every factor', () => {
    for (let f = 0.05; f <= 1; f += 0.05) {
      const [s, n, c] = (['sheddable', 'normal', 'critical'] as const).map((k) => shareOf(k, f, 0.3, false));
      expect(s).toBeLessThanOrEqual(n as number);
      expect(n).toBeLessThanOrEqual(c as number);
    }
  });

  it('keeps half a concurrency rule for normal and critical requests, even at full health', () => {
    expect(shareOf('sheddable', 1, 0.5, true)).toBe(SHEDDABLE_LEASE_SHARE);
    expect(shareOf('normal', 1, 0.5, true)).toBe(1);
  });
});

describe('scaled', () => {
  it('rounds down, keeps at least 1 while the share is above 0, and 0 at none', () => {
    expect(scaled(100, 0.255)).toBe(25);
    expect(scaled(3, 0.1)).toBe(1);
    expect(scaled(3, 0)).toBe(0);
    expect(scaled(0, 0.5)).toBe(0);
  });

  it('scales limit and burst, and hands back the same params at a share of 1', () => {
    const params = { limit: 100, windowMs: 1000, burst: 40 };
    expect(scaledParams(params, 1)).toBe(params);
    expect(scaledParams(params, 0.5)).toEqual({ limit: 50, windowMs: 1000, burst: 20 });
  });
});

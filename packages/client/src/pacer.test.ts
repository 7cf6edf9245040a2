import { describe, expect, it } from 'vitest';
import { Pacer } from './pacer.js';
import type { RateLimitInfo } from './rateLimitFields.js';

const T0 = 1_000_000;
const info = (remaining: number, resetMs: number, extra: Partial<RateLimitInfo> = {}): RateLimitInfo => ({
  policy: 'p',
  remaining,
  resetMs,
  ...extra,
});

/** A pacer that has seen one response to `/a` saying `said`. */
function pacerAfter(said: RateLimitInfo[], random = () => 0.5, jitterMs = 1000): Pacer {
  const pacer = new Pacer(jitterMs, random);
  const first = pacer.reserve('/a', T0);
  pacer.observe('/a', first.seq, said, T0);
  return pacer;
}

describe('Pacer', () => {
  it('holds nothing back before any response said anything', () => {
    const pacer = new Pacer(1000, () => 0.5);
    for (let i = 0; i < 5; i++) expect(pacer.reserve('/a', T0).sendAt).toBe(T0);
  });

  it('spreads the remaining requests evenly until the reset', () => {
    const pacer = pacerAfter([info(4, 8000)]);
    const slots = [1, 2, 3, 4].map(() => pacer.reserve('/a', T0).sendAt - T0);
    expect(slots).toEqual([0, 2000, 4000, 6000]);
  });

  it('sends nothing more before the reset once none remain; with a known window, the next one is spread', () => {
    const pacer = pacerAfter([info(1, 3000, { limit: 4, windowMs: 4000 })], () => 0.5);
    expect(pacer.reserve('/a', T0).sendAt).toBe(T0);
    // The next window is [3000, 7000) and holds 4: the first half an interval (of 1000) in, the rest spread
    // over what is left of it; the fifth goes to the window after.
    const next = [1, 2, 3, 4, 5].map(() => pacer.reserve('/a', T0).sendAt - T0);
    expect(next).toEqual([3500, 4375, 5250, 6125, 7500]);
    expect(next.every((at) => at >= 3000)).toBe(true);
  });

  it('sends after the reset plus jitter when nothing is known of the next window', () => {
    let draw = 0;
    const randoms = [0.1, 0.9];
    const pacer = pacerAfter([info(0, 2000)], () => randoms[draw++]!, 1000);
    expect(pacer.reserve('/a', T0).sendAt - T0).toBeCloseTo(2100);
    expect(pacer.reserve('/a', T0).sendAt - T0).toBeCloseTo(2900);
    // After the reset, with no news, the policy is forgotten.
    expect(pacer.reserve('/a', T0 + 2000).sendAt).toBe(T0 + 2000);
  });

  it('counts requests reserved after the answered one as already spent', () => {
    const pacer = new Pacer(0, () => 0);
    const first = pacer.reserve('/a', T0);
    pacer.reserve('/a', T0);
    pacer.reserve('/a', T0);
    // The first answer says 2 remain, but two more requests left since: none remain.
    pacer.observe('/a', first.seq, [info(2, 5000)], T0);
    expect(pacer.reserve('/a', T0).sendAt).toBe(T0 + 5000);
  });

  it('ignores an answer older than the one applied', () => {
    const pacer = new Pacer(0, () => 0);
    const older = pacer.reserve('/a', T0);
    const newer = pacer.reserve('/a', T0);
    pacer.observe('/a', newer.seq, [info(0, 5000)], T0);
    pacer.observe('/a', older.seq, [info(50, 1000)], T0);
    expect(pacer.reserve('/a', T0).sendAt).toBe(T0 + 5000);
  });

  it('paces a path by the policies it reported, and an unseen path by all of them', () => {
    const pacer = new Pacer(0, () => 0);
    const search = pacer.reserve('/search', T0);
    pacer.observe('/search', search.seq, [info(0, 9000, { policy: 'search' })], T0);
    const free = pacer.reserve('/health', T0);
    pacer.observe('/health', free.seq, [], T0);
    expect(pacer.reserve('/health', T0)).toMatchObject({ sendAt: T0, policy: undefined });
    expect(pacer.reserve('/search', T0)).toMatchObject({ sendAt: T0 + 9000, policy: 'search' });
    expect(pacer.reserve('/users/7', T0)).toMatchObject({ sendAt: T0 + 9000, policy: 'search' });
  });

  it('refills a known window that passed while idle, with no wait', () => {
    const pacer = pacerAfter([info(0, 1000, { limit: 2, windowMs: 1000 })]);
    expect(pacer.reserve('/a', T0 + 10_500).sendAt).toBe(T0 + 10_500);
  });
});

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
    for (let i = 0; i < 5; i++) expect(pacer.reserve('/a', T0)).toMatchObject({ taken: true, sendAt: T0 });
  });

  it('spreads the remaining requests evenly until the reset', () => {
    const pacer = pacerAfter([info(4, 8000)]);
    const slots = [1, 2, 3, 4].map(() => pacer.reserve('/a', T0).sendAt - T0);
    expect(slots).toEqual([0, 2000, 4000, 6000]);
  });

  it('gives no slot while a policy is spent: come back after the reset plus jitter', () => {
    let draw = 0;
    const randoms = [0.1, 0.9];
    const pacer = pacerAfter([info(0, 2000)], () => randoms[draw++]!, 1000);
    expect(pacer.reserve('/a', T0)).toMatchObject({ taken: false, policy: 'p' });
    expect(pacer.reserve('/a', T0).sendAt - T0).toBeCloseTo(2900);
    expect(draw).toBe(2);
  });

  it('forgets a spent policy at its reset when nothing says what the next window holds', () => {
    const pacer = pacerAfter([info(0, 2000)]);
    expect(pacer.reserve('/a', T0 + 2000)).toMatchObject({
      taken: true,
      sendAt: T0 + 2000,
      policy: undefined,
    });
  });

  it('starts a known quota over at the reset, less the requests still unanswered', () => {
    const pacer = pacerAfter([info(1, 3000, { limit: 4, windowMs: 4000 })]);
    expect(pacer.reserve('/a', T0)).toMatchObject({ taken: true, sendAt: T0 });
    expect(pacer.reserve('/a', T0).taken).toBe(false);
    // At the reset, 4 again, one of which may be the request above, unanswered: 3 slots over [3000, 7000).
    const slots = [1, 2, 3].map(() => pacer.reserve('/a', T0 + 3000));
    expect(slots.every((slot) => slot.taken)).toBe(true);
    const times = slots.map((slot) => slot.sendAt - T0);
    expect(times[0]).toBe(3000);
    expect(times[1]).toBeCloseTo(3000 + 4000 / 3);
    expect(times[2]).toBeCloseTo(3000 + (2 * 4000) / 3);
    expect(pacer.reserve('/a', T0 + 3000).taken).toBe(false);
  });

  it('counts requests reserved after the answered one as already spent', () => {
    const pacer = new Pacer(0, () => 0);
    const first = pacer.reserve('/a', T0);
    pacer.reserve('/a', T0);
    pacer.reserve('/a', T0);
    // The first answer says 2 remain, but two more requests left since: none remain.
    pacer.observe('/a', first.seq, [info(2, 5000)], T0);
    expect(pacer.reserve('/a', T0)).toMatchObject({ taken: false, sendAt: T0 + 5000 });
  });

  it('takes a slot past the quota when forced', () => {
    const pacer = pacerAfter([info(0, 5000)], () => 0);
    const forced = pacer.reserve('/a', T0, true);
    expect(forced).toMatchObject({ taken: true, sendAt: T0 });
    expect(forced.seq).toBeGreaterThan(0);
  });

  it('ignores an answer older than the one applied', () => {
    const pacer = new Pacer(0, () => 0);
    const older = pacer.reserve('/a', T0);
    const newer = pacer.reserve('/a', T0);
    pacer.observe('/a', newer.seq, [info(0, 5000)], T0);
    pacer.observe('/a', older.seq, [info(50, 1000)], T0);
    expect(pacer.reserve('/a', T0)).toMatchObject({ taken: false, sendAt: T0 + 5000 });
  });

  it('paces a path by the policies it reported, and an unseen path by all of them', () => {
    const pacer = new Pacer(0, () => 0);
    const search = pacer.reserve('/search', T0);
    pacer.observe('/search', search.seq, [info(0, 9000, { policy: 'search' })], T0);
    const free = pacer.reserve('/health', T0);
    pacer.observe('/health', free.seq, [], T0);
    expect(pacer.reserve('/health', T0)).toMatchObject({ taken: true, sendAt: T0, policy: undefined });
    expect(pacer.reserve('/search', T0)).toMatchObject({ taken: false, sendAt: T0 + 9000, policy: 'search' });
    expect(pacer.reserve('/users/7', T0)).toMatchObject({
      taken: false,
      sendAt: T0 + 9000,
      policy: 'search',
    });
  });

  it('refills a known window that passed while idle, with no wait', () => {
    const pacer = pacerAfter([info(0, 1000, { limit: 2, windowMs: 1000 })]);
    expect(pacer.reserve('/a', T0 + 10_500)).toMatchObject({ taken: true, sendAt: T0 + 10_500 });
  });
});

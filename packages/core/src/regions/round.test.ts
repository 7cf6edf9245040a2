import { describe, expect, it } from 'vitest';
import { compileRules } from '../rules/compile.js';
import type { CheckResult } from '../store/contract.js';
import { Counter, type WindowView } from './ledger.js';
import { applyAnswer, type Op, opChecks, planOp, type Sizing, UNBOUNDED } from './round.js';

const [RULE] = compileRules({
  rules: [
    {
      name: 'g',
      key: [],
      global: true,
      limit: { requests: 1000, per: '1s' },
      algorithm: 'fixed_window',
      scope: 'global',
    },
  ],
}).rules;
const NOW = 1_700_000_000_250;
const SIZING: Sizing = { firstSlice: 0.01, maxSlice: 0.25, horizonMs: 400 };

function known(at: { held: number; used?: number; granted?: number }): {
  counter: Counter;
  view: WindowView;
} {
  const counter = new Counter(RULE!, 'tag', NOW);
  const view = counter.viewAt(NOW);
  view.known = true;
  view.exact = true;
  view.held = view.regionGranted = at.held;
  view.globalGranted = at.granted ?? at.held;
  view.used = at.used ?? 0;
  return { counter, view };
}

/** An answer of a fixed_window check of `limit` whose counter held `count` before a request of `cost`. */
function answer(limit: number, count: number, cost: number): CheckResult {
  const allowed = count + cost <= limit;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count - (allowed ? cost : 0)),
    resetMs: 750,
    retryAfterMs: allowed ? 0 : 750,
  };
}

describe('an op and its answer', () => {
  it('takes a slice as a pair: G within the limit, R only from the grant last read (compare-and-set)', () => {
    const { counter, view } = known({ held: 100, used: 90, granted: 400 });
    counter.rate = 0.5;
    const op = planOp(counter, view, NOW, SIZING, true)!;
    expect(op).toMatchObject({ kind: 'take', units: 200 });
    const [g, r] = opChecks(op, 'eu');
    expect(g).toMatchObject({
      rule: 'g.g',
      cost: 200,
      mode: 'enforce',
      params: { limit: 1000, windowMs: 1000 },
    });
    expect(r).toMatchObject({ rule: 'g.r.eu', cost: 200, mode: 'enforce', params: { limit: 300 } });
    expect(g.tag).toBe(r.tag);
    expect(applyAnswer(op, answer(1000, 400, 200), answer(300, 100, 200), false)).toEqual({
      committed: true,
      ambiguous: false,
    });
    expect(view).toMatchObject({ held: 300, regionGranted: 300, globalGranted: 600, lastSlice: 200 });
  });

  it('learns the grant another gateway of the region took when its own compare-and-set fails', () => {
    const { counter, view } = known({ held: 100, used: 95 });
    counter.rate = 0.25;
    const op = planOp(counter, view, NOW, SIZING, true)!;
    expect(op.kind).toBe('take');
    // Another gateway took 50 meanwhile: R is 150, so this take is refused, and its answer shows 150.
    applyAnswer(op, answer(1000, 300, op.units), answer(100 + op.units, 150, op.units), false);
    expect(view).toMatchObject({ held: 150, regionGranted: 150, exact: true });
    // Far beyond: only a lower bound is known, and the next op reads it.
    const next = planOp(counter, view, NOW, SIZING, true)!;
    applyAnswer(next, answer(1000, 900, next.units), answer(150 + next.units, 900, next.units), false);
    expect(view.exact).toBe(false);
    expect(view.held).toBe(150 + next.units);
    expect(planOp(counter, view, NOW, SIZING, true)!.kind).toBe('read');
  });

  it('keeps only what is certain when another op of the call was refused (nothing, or a Cluster slot, written)', () => {
    const { counter, view } = known({ held: 100, used: 95 });
    counter.rate = 0.25;
    const op = planOp(counter, view, NOW, SIZING, true)!;
    expect(applyAnswer(op, answer(1000, 100, op.units), answer(100 + op.units, 100, op.units), true)).toEqual(
      {
        committed: false,
        ambiguous: true,
      },
    );
    expect(view).toMatchObject({ held: 100, exact: false });
  });

  it('charges back what a region admitted beyond its grant, and a grant the global store lost', () => {
    const first = known({ held: 50, used: 80 });
    const charge = planOp(first.counter, first.view, NOW, SIZING, true)!;
    expect(charge).toMatchObject({ kind: 'charge', units: 30 });
    const [g, r] = opChecks(charge, 'eu');
    expect(g.params.limit).toBe(UNBOUNDED);
    expect(r.params.limit).toBe(80);
    // A read finds R at 0 (the global store restarted): the grant of 300 is written back.
    const lost = known({ held: 300, used: 120 });
    const read: Op = { counter: lost.counter, view: lost.view, kind: 'read', units: 0, at: NOW };
    applyAnswer(read, answer(UNBOUNDED, 0, 0), answer(UNBOUNDED, 0, 0), false);
    expect(lost.view).toMatchObject({ held: 300, regionGranted: 0, globalGranted: 0 });
    expect(planOp(lost.counter, lost.view, NOW, SIZING, true)).toMatchObject({ kind: 'charge', units: 300 });
  });

  it('asks for half the room left near the end of the budget, and nothing when none is left', () => {
    const { counter, view } = known({ held: 100, used: 100, granted: 900 });
    view.starved = true;
    view.lastSlice = 100;
    expect(planOp(counter, view, NOW, SIZING, true)).toMatchObject({ kind: 'take', units: 50 });
    view.globalGranted = 1000;
    expect(planOp(counter, view, NOW, SIZING, true)).toMatchObject({ kind: 'read' });
    expect(planOp(counter, view, NOW, SIZING, false)).toBeUndefined();
  });
});

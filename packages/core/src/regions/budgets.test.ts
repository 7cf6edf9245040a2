import { afterEach, describe, expect, it } from 'vitest';
import { globalRules, RegionWorld, type Tally, totalOf } from '../../../../test/support/regions-timeline.js';
import type { RuleSpec } from '../rules/schema.js';

/** The global limit of the tests: 1000 per 1 s window, across every region. */
const LIMIT = 1000;
const WINDOW_MS = 1000;
/** The optimistic first slice of a counter a region has not synced yet (firstSlice 0.01). */
const FIRST_SLICE = 10;

const globalRule = (extra: Partial<RuleSpec> = {}) => globalRules(LIMIT, extra);

const THREE = [
  { name: 'us', latencyMs: 50 },
  { name: 'eu', latencyMs: 80 },
  { name: 'ap', latencyMs: 150 },
];

const total = totalOf;

let world: RegionWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** Runs `windows` whole windows of traffic at `rates`; each window's tallies. */
async function windows(w: RegionWorld, rates: readonly number[], count: number): Promise<Tally[][]> {
  const out: Tally[][] = [];
  for (let i = 0; i < count; i++) out.push(await w.traffic(rates, WINDOW_MS));
  return out;
}

describe('one global budget across regions', () => {
  it('admits at most the limit per window, plus the first slices in the counter’s first window (overload 80/15/5)', async () => {
    world = new RegionWorld({ regions: THREE, rules: globalRule() });
    await world.toNextWindow(WINDOW_MS);
    const run = await windows(world, [1600, 300, 100], 10);
    expect(total(run[0]!)).toBeLessThanOrEqual(LIMIT + THREE.length * FIRST_SLICE);
    for (const window of run.slice(1)) expect(total(window)).toBeLessThanOrEqual(LIMIT);
    // The budget is used, not stranded: each steady window admits nearly all of it.
    for (const window of run.slice(1)) expect(total(window)).toBeGreaterThanOrEqual(LIMIT * 0.95);
  });

  it('gives each region a share that follows its demand (80/15/5) within a few rounds, max-min fair', async () => {
    world = new RegionWorld({ regions: THREE, rules: globalRule() });
    await world.toNextWindow(WINDOW_MS);
    const run = await windows(world, [1600, 300, 100], 6);
    const steady = run.slice(2);
    const share = (i: number) =>
      steady.reduce((sum, w) => sum + w[i]!.admitted, 0) / steady.reduce((s, w) => s + total(w), 0);
    // Demand 1600/300/100 for 1000: the max-min fair shares are 600/300/100 (the small regions get what they
    // ask, the large one the rest); each region gets most of its fair share.
    expect(share(0)).toBeGreaterThan(0.55);
    expect(share(1)).toBeGreaterThan(0.2);
    expect(share(1)).toBeLessThanOrEqual(0.31);
    expect(share(2)).toBeGreaterThan(0.06);
    expect(share(2)).toBeLessThanOrEqual(0.11);
    // Demand moves to the second region: its share follows within two windows.
    const moved = await windows(world, [100, 1600, 300], 3);
    const last = moved[2]!;
    expect(last[1]!.admitted / total(last)).toBeGreaterThan(0.5);
    expect(last[0]!.admitted / total(last)).toBeLessThanOrEqual(0.11);
  });

  it('admits everything below the limit once the counter is known, at a few global calls per second per gateway', async () => {
    world = new RegionWorld({ regions: THREE, rules: globalRule() });
    await world.toNextWindow(WINDOW_MS);
    const run = await windows(world, [640, 120, 40], 5);
    for (const window of run.slice(1)) expect(total(window, 'denied')).toBe(0);
    // One round (two calls when a window ends) every syncMs per gateway, whatever the traffic.
    const calls = run.slice(1).reduce((sum, w) => sum + total(w, 'globalCalls'), 0);
    expect(calls / 4 / THREE.length).toBeLessThanOrEqual(15);
  });

  it('decides every request without waiting on the global store, even on a 150 ms link', async () => {
    world = new RegionWorld({ regions: [{ name: 'ap', latencyMs: 150 }], rules: globalRule() });
    // RegionWorld.send throws if a decision is a promise: the regional store answers in process, the global
    // store is never on the request path.
    const [tally] = await world.traffic([500], 3000);
    expect(tally!.admitted + tally!.denied).toBeGreaterThanOrEqual(1500);
    expect(world.links[0]!.calls).toBeGreaterThan(0);
  });

  it('bounds a region with many gateways: concurrent takes grow its grant one slice at a time', async () => {
    world = new RegionWorld({
      regions: [
        { name: 'us', latencyMs: 50, gateways: 20 },
        { name: 'eu', latencyMs: 80, gateways: 20 },
      ],
      rules: globalRule(),
    });
    await world.toNextWindow(WINDOW_MS);
    const run = await windows(world, [1500, 500], 5);
    expect(total(run[0]!)).toBeLessThanOrEqual(LIMIT + 2 * FIRST_SLICE);
    for (const window of run.slice(1)) {
      expect(total(window)).toBeLessThanOrEqual(LIMIT);
      expect(total(window)).toBeGreaterThanOrEqual(LIMIT * 0.9);
    }
    const slices = world.events.flat().filter((e) => e.kind === 'slice');
    expect(slices.length).toBeGreaterThan(0);
    for (const slice of slices)
      if (slice.kind === 'slice') expect(slice.units).toBeLessThanOrEqual(LIMIT * 0.25);
  });
});

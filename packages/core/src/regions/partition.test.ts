import { afterEach, describe, expect, it } from 'vitest';
import {
  globalRules,
  RegionWorld,
  type Tally,
  Timeline,
  totalOf,
} from '../../../../test/support/regions-timeline.js';
import { createLimiter } from '../engine/engine.js';
import type { Decision } from '../observe/contract.js';
import type { RuleSpec } from '../rules/schema.js';
import type { Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';

const LIMIT = 1000;
const WINDOW_MS = 1000;
/** Largest slice: maxSlice 0.25 of the limit. */
const MAX_SLICE = 250;

const globalRule = (extra: Partial<RuleSpec> = {}) => globalRules(LIMIT, extra);

const THREE = [
  { name: 'us', latencyMs: 50 },
  { name: 'eu', latencyMs: 80 },
  { name: 'ap', latencyMs: 150 },
];
const DEMAND = [1600, 300, 100];

const total = (tallies: readonly Tally[]) => totalOf(tallies);
const lines = (log: readonly string[], code: string) => log.filter((line) => line.includes(`[${code}]`));

let world: RegionWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function warmed(extra: Partial<RuleSpec> = {}): Promise<RegionWorld> {
  world = new RegionWorld({ regions: THREE, rules: globalRule(extra) });
  await world.toNextWindow(WINDOW_MS);
  for (let i = 0; i < 4; i++) await world.traffic(DEMAND, WINDOW_MS);
  return world;
}

describe('a region cut off from the global store', () => {
  it('decides on its recent share × the margin, marks its decisions, says so once, and rejoins without a burst', async () => {
    const w = await warmed();
    const eu = w.links[1]!;
    eu.down = true;
    const cut: Tally[][] = [];
    for (let i = 0; i < 3; i++) cut.push(await w.traffic(DEMAND, WINDOW_MS));
    // eu's share was about 0.3 (its 300 of the max-min fair 600/300/100): it admits about 300 × 1.1 a window.
    for (const window of cut.slice(1)) {
      const own = window[1]!;
      expect(own.admitted).toBeGreaterThan(200);
      expect(own.admitted).toBeLessThanOrEqual(Math.ceil(LIMIT * 0.31 * 1.1));
      expect(own.marked).toBe(own.admitted + own.denied);
      expect(window[0]!.marked + window[2]!.marked).toBe(0);
      // The other regions keep to the budget; eu's excess over its grant is the partition's whole cost.
      expect(total(window)).toBeLessThanOrEqual(LIMIT + Math.ceil(LIMIT * 0.31 * 1.1));
    }
    const decision = w.send(1);
    expect(decision.reason === 'global_unreachable' || !decision.allowed).toBe(true);
    expect(decision.results[0]).toMatchObject({ failed: true, fallback: true });
    if (decision.allowed) expect(decision.failedOpen).toBe(true);
    // Once per episode, however many rounds failed.
    expect(lines(w.logs[1]!, 'SLUICE_GLOBAL_UNREACHABLE')).toHaveLength(1);
    expect(w.events[1]!.filter((e) => e.kind === 'unreachable')).toHaveLength(1);
    expect(w.logs[0]!.concat(w.logs[2]!)).toEqual([]);

    const charged = w.events[1]!.filter((e) => e.kind === 'charge').length;
    await w.traffic(DEMAND, WINDOW_MS / 2);
    eu.down = false;
    const rejoin = await w.traffic(DEMAND, WINDOW_MS / 2);
    expect(lines(w.logs[1]!, 'SLUICE_GLOBAL_REJOINED')).toHaveLength(1);
    expect(w.events[1]!.filter((e) => e.kind === 'rejoined')).toHaveLength(1);
    // Marked until its first round goes through (a round and a round trip, 180 ms of 300 a second: 54).
    expect(rejoin[1]!.marked).toBeLessThanOrEqual(60);
    // What eu admitted beyond its grant went into the global count: a charge, and no second budget for it.
    expect(w.events[1]!.filter((e) => e.kind === 'charge').length).toBeGreaterThan(charged);
    const after: Tally[][] = [];
    for (let i = 0; i < 3; i++) after.push(await w.traffic(DEMAND, WINDOW_MS));
    for (const window of after) {
      expect(total(window)).toBeLessThanOrEqual(LIMIT);
      expect(window[1]!.marked).toBe(0);
    }
    expect(lines(w.logs[1]!, 'SLUICE_GLOBAL_UNREACHABLE')).toHaveLength(1);
  });

  it('takes the margin a rule states', async () => {
    const w = await warmed({ partition_margin: 0.5 });
    w.links[1]!.down = true;
    await w.traffic(DEMAND, WINDOW_MS);
    const [, eu] = await w.traffic(DEMAND, WINDOW_MS);
    expect(eu!.admitted).toBeLessThanOrEqual(Math.ceil(LIMIT * 0.31 * 0.5));
    expect(eu!.marked).toBeGreaterThan(0);
  });

  it('treats a global store that hangs as unreachable once its time limit passes', async () => {
    const timeline = new Timeline();
    const hung: Store = {
      evaluate: () => new Promise(() => {}),
      release: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const log: string[] = [];
    const limiter = createLimiter({
      rules: globalRule(),
      store: new MemoryStore(),
      clock: timeline.clock,
      logger: { warn: (line) => void log.push(line) },
      regions: { region: 'eu', global: hung, syncMs: 50, timeoutMs: 20, schedule: timeline.schedule },
    });
    limiter.decide({});
    await timeline.advance(10);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await timeline.advance(10);
    const decision = limiter.decide({}) as Decision;
    expect(decision.reason).toBe('global_unreachable');
    expect(lines(log, 'SLUICE_GLOBAL_UNREACHABLE')).toHaveLength(1);
    await limiter.close();
  });
});

describe('a global store that restarts and loses its data', () => {
  it('loses at most one slice per region in that window, and the budget holds after', async () => {
    const w = await warmed();
    const first = await w.traffic(DEMAND, WINDOW_MS / 2);
    const before = w.events.flat().filter((e) => e.kind === 'charge').length;
    w.keys.restart();
    const rest = await w.traffic(DEMAND, WINDOW_MS / 2);
    expect(w.timeline.now % WINDOW_MS).toBe(0);
    // Each region rewrites its grant into the emptied store (a charge) on its next round.
    expect(w.events.flat().filter((e) => e.kind === 'charge').length).toBeGreaterThan(before);
    // The window admits at most the limit and one slice a region (those taken before a region restored its own).
    expect(total(first) + total(rest)).toBeLessThanOrEqual(LIMIT + THREE.length * MAX_SLICE);
    const after: Tally[][] = [];
    for (let i = 0; i < 3; i++) after.push(await w.traffic(DEMAND, WINDOW_MS));
    for (const window of after) expect(total(window)).toBeLessThanOrEqual(LIMIT);
  });
});

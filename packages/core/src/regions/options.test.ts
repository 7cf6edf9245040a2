import { afterEach, describe, expect, it } from 'vitest';
import { LinkedStore, RegionWorld, Timeline } from '../../../../test/support/regions-timeline.js';
import { ConfigError, formatProblem, RulesError } from '../base/errors.js';
import { createLimiter, type Limiter } from '../engine/engine.js';
import type { Decision } from '../observe/contract.js';
import { compileRules } from '../rules/compile.js';
import { parseRules } from '../rules/parse.js';
import type { Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';

/** The problems of one rule written as `lines` (after its name), as users see them. */
function problemsOf(...lines: string[]): string[] {
  const text = ['domain: d', 'rules:', '  - name: search_global', ...lines].join('\n');
  try {
    parseRules(text, { source: 'rules.yaml', today: '2026-03-01' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  return [];
}

const GLOBAL = [
  '    key: []',
  '    global: true',
  '    limit: {requests: 5000, per: 1s}',
  '    scope: global',
];

describe('scope: global in a rules file', () => {
  it('takes fixed_window and quota', () => {
    expect(problemsOf(...GLOBAL, '    algorithm: fixed_window', '    partition_margin: 1.2')).toEqual([]);
    expect(
      problemsOf(
        '    key: []',
        '    global: true',
        '    limit: {requests: 5, per: month}',
        '    algorithm: quota',
        '    scope: global',
      ),
    ).toEqual([]);
  });

  it('refuses other algorithms, fields that split or scale the counter, and a margin without it', () => {
    expect(problemsOf(...GLOBAL, '    algorithm: sliding_window')).toEqual([
      'rules.yaml:8:16 rules[0].algorithm: scope: global takes algorithm: fixed_window or quota (a budget granted in slices is a count per window); this rule uses sliding_window',
    ]);
    expect(problemsOf(...GLOBAL, '    algorithm: fixed_window', '    shards: 4')).toEqual([
      'rules.yaml:9:13 rules[0].shards: shards does not mix with scope: global: remove one',
    ]);
    expect(
      problemsOf('    key: [ip]', '    limit: {requests: 5, per: 1s}', '    partition_margin: 1.1'),
    ).toEqual(['rules.yaml:6:23 rules[0].partition_margin: partition_margin only applies to scope: global']);
    expect(problemsOf(...GLOBAL, '    algorithm: fixed_window', '    partition_margin: 0')).toEqual([
      'rules.yaml:9:23 rules[0].partition_margin: `partition_margin` must be a number above 0 and at most 10 (1.1: a tenth above the share), got 0',
    ]);
  });

  it('suggests the scope names', () => {
    expect(problemsOf(...GLOBAL.slice(0, 3), '    scope: globle')).toEqual([
      'rules.yaml:7:12 rules[0].scope: `scope` must be store, local or global, got "globle" (did you mean "global"?)',
    ]);
  });
});

const RULES = compileRules({
  rules: [
    {
      name: 'search_global',
      match: { route: '/search' },
      key: [],
      global: true,
      limit: { requests: 100, per: '1s' },
      algorithm: 'fixed_window',
      scope: 'global',
    },
    { name: 'per_key', key: ['api_key'], limit: { requests: 1000, per: '1m' } },
  ],
});

let limiter: Limiter | undefined;
afterEach(async () => {
  await limiter?.close();
  limiter = undefined;
});

describe('the regions option', () => {
  const global = new MemoryStore();

  it('is checked at construction, with did-you-mean', () => {
    expect(() =>
      createLimiter({ rules: RULES, regions: { region: 'eu', global, sycnMs: 100 } as never }),
    ).toThrow(/sycnMs.*syncMs/);
    expect(() => createLimiter({ rules: RULES, regions: { region: 'EU West', global } })).toThrow(
      ConfigError,
    );
    expect(() => createLimiter({ rules: RULES, regions: { region: 'eu', global: {} as never } })).toThrow(
      'regions.global must be a store (it has no evaluate() method)',
    );
    expect(() => createLimiter({ rules: RULES, regions: { region: 'eu', global, margin: 0 } })).toThrow(
      'regions.margin must be a number from 0.01 to 10, got 0',
    );
  });

  it('leaves a global rule in the limiter’s store when it is not given (one store is already global)', async () => {
    limiter = createLimiter({ rules: RULES });
    for (let i = 0; i < 100; i++) expect((await limiter.check({ route: '/search' })).allowed).toBe(true);
    expect((await limiter.check({ route: '/search' })).allowed).toBe(false);
    expect(limiter.explain({ route: '/search' }).rules[0]).not.toHaveProperty('budget');
  });

  it('explains which budget a rule draws on: the global one, from this region, with its grant', async () => {
    const timeline = new Timeline();
    limiter = createLimiter({
      rules: RULES,
      store: new MemoryStore(),
      clock: timeline.clock,
      regions: { region: 'eu', global: new LinkedStore(timeline, 50), schedule: timeline.schedule },
    });
    const before = limiter.explain({ route: '/search', api_key: 'k' });
    expect(before.rules.map((r) => [r.rule, r.scope])).toEqual([
      ['search_global', 'global'],
      ['per_key', 'store'],
    ]);
    expect(before.rules[0]!.budget).toEqual({
      region: 'eu',
      limit: 100,
      grant: undefined,
      deciding: 1,
      partitioned: false,
    });
    expect(before.rules[1]!.budget).toBeUndefined();
    limiter.decide({ route: '/search' });
    await timeline.advance(300);
    const after = limiter.explain({ route: '/search' }).rules[0]!.budget!;
    expect(after.grant).toBeGreaterThan(0);
    expect(after.deciding).toBe(after.grant);
  });

  it('works the same through checkMany: counted in the regional store, marked when partitioned', async () => {
    const world = new RegionWorld({
      regions: [{ name: 'eu', latencyMs: 20 }],
      rules: RULES,
    });
    const [eu] = world.gateways[0]!;
    const many = async () =>
      await eu!.checkMany([{ descriptors: { route: '/search' } }, { descriptors: { api_key: 'k' } }]);
    await world.toNextWindow(1000);
    let admitted = 0;
    await world.timeline.advance(
      1000,
      async () => {
        if ((await many()).every((d) => d.allowed)) admitted++;
      },
      5,
    );
    expect(admitted).toBeGreaterThan(50);
    expect(admitted).toBeLessThanOrEqual(100 + 1);
    world.links[0]!.down = true;
    await world.traffic([0], 1000);
    await world.timeline.advance(10, async () => void (await many()));
    const [search, key] = (await many()) as Decision[];
    expect(search!.reason === 'global_unreachable' || !search!.allowed).toBe(true);
    expect(search!.results[0]).toMatchObject({ rule: 'search_global', failed: true, fallback: true });
    expect(key!.results[0]).toMatchObject({ rule: 'per_key', failed: false });
    await world.close();
  });

  it('stops taking slices ahead on a global store that decides on its own clock, and keeps the budget', async () => {
    const timeline = new Timeline();
    const linked = new LinkedStore(timeline, 30);
    // A store deciding at its own time (Redis with clock: 'redis'), whatever `now` it is given.
    const ownClock: Store = {
      timeLimited: true,
      evaluate: (checks) => linked.evaluate(checks, timeline.now),
      release: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const charges: number[] = [];
    limiter = createLimiter({
      rules: RULES,
      store: new MemoryStore(),
      clock: timeline.clock,
      observer: { onRegion: (e) => void (e.kind === 'charge' && charges.push(e.units)) },
      regions: { region: 'eu', global: ownClock, schedule: timeline.schedule },
    });
    await timeline.advance(1000 - (timeline.now % 1000));
    const admitted: number[] = [];
    for (let w = 0; w < 4; w++) {
      let count = 0;
      await timeline.advance(
        1000,
        () => {
          if ((limiter!.decide({ route: '/search' }) as Decision).allowed) count++;
        },
        5,
      );
      admitted.push(count);
    }
    // 200 a second asked of 100: each window admits at most the limit and the first slice (1).
    for (const count of admitted) expect(count).toBeLessThanOrEqual(101);
    // Slices taken ahead would land in keys the next window does not read: it would start each window short
    // (88 of 100 here, deterministic on virtual time); taken at the window's start instead, 97.
    expect(Math.min(...admitted.slice(1))).toBeGreaterThanOrEqual(95);
    expect(charges.length).toBeLessThanOrEqual(1);
  });

  it.each([
    ['behind', -300],
    ['ahead of', 300],
  ])('keeps the bound on a global store whose own clock is %s the gateways’ (300 ms)', async (_, skewMs) => {
    const world = new RegionWorld({
      regions: [
        { name: 'us', latencyMs: 20 },
        { name: 'eu', latencyMs: 50 },
        { name: 'ap', latencyMs: 80 },
      ],
      rules: RULES,
    });
    const timeline = world.timeline;
    // Every link decides at the store's own time, whatever `now` it is given.
    for (const link of world.links) {
      const evaluate = link.evaluate.bind(link);
      link.evaluate = (checks) => evaluate(checks, timeline.now + skewMs);
    }
    await world.toNextWindow(1000);
    const windows: number[] = [];
    const search = { route: '/search' };
    for (let w = 0; w < 6; w++) {
      let admitted = 0;
      await timeline.advance(
        1000,
        () => {
          for (let i = 0; i < 3; i++) {
            const sent = [2, 1, 1][i]!;
            for (let n = 0; n < sent; n++) if (world.send(i, search).allowed) admitted++;
          }
        },
        10,
      );
      windows.push(admitted);
    }
    // The limit and the first slices (1 a region): a window's counters reach the store only in that window.
    for (const admitted of windows) expect(admitted).toBeLessThanOrEqual(103);
    expect(Math.min(...windows.slice(1))).toBeGreaterThanOrEqual(90);
    await world.close();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { namesWhere } from '../algorithms/index.js';
import { guardObserver } from '../observe/guarded.js';
import { compileRules } from '../rules/compile.js';
import type { CompiledRules } from '../rules/contract.js';
import type { RuleSpec } from '../rules/schema.js';
import type { PlannedCheck } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { TagCache } from '../store/tags.js';
import { LocalLeases } from './localLeases.js';
import type { RequestPath } from './pathParts.js';
import { decideOne } from './requestPath.js';
import { StoreCaller } from './storeCall.js';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

/** Local leases that count how often the general path asks them for a plan. */
class CountedPools extends LocalLeases {
  taken = 0;
  override take(planned: readonly PlannedCheck[], now: number) {
    this.taken++;
    return super.take(planned, now);
  }
}

function pathOf(table: CompiledRules, store: MemoryStore, clock: () => number, dryRun = false) {
  const observer = guardObserver();
  const local = new MemoryStore();
  const pools = new CountedPools();
  const path: RequestPath = {
    table,
    lists: undefined,
    dryRun,
    tags: new TagCache('secret'),
    pools,
    calls: { store: new StoreCaller(store, observer, clock), local: new StoreCaller(local, observer, clock) },
    stores: { store, local },
    observer,
    clock,
  };
  return { path, pools };
}

/** The same table with its `plain` mark taken off: every check goes the general way. */
const general = (table: CompiledRules): CompiledRules => ({ ...table, plain: false });

const COUNTING = namesWhere((d) => d.release !== 'lease' && d.limit === 'requests');

const ruleSpec = fc.record({
  algorithm: fc.constantFrom(...COUNTING),
  requests: fc.integer({ min: 1, max: 4 }),
  perSeconds: fc.integer({ min: 1, max: 5 }),
  key: fc.constantFrom(['user'], ['user', 'route'], ['route']),
  onlyRoute: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
  shadow: fc.boolean(),
  rollout: fc.constantFrom(100, 50, 0),
  cost: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
});

describe('the plain lane', () => {
  it('marks a table plain only when every rule only counts', () => {
    const limit = { requests: 1, per: '1m' };
    expect(compileRules({ rules: [{ name: 'a', key: ['user'], limit }] }).plain).toBe(true);
    const notPlain: RuleSpec[] = [
      { name: 'b', key: ['user'], limit, ban: { after: 2, within: '1m', for: '1m' } },
      { name: 'b', key: ['user'], limit, scope: 'local' },
      { name: 'b', key: ['user'], limit: { concurrent: 2 }, algorithm: 'concurrency' },
      { name: 'b', key: ['user'], limit, count: 'failed' },
      { name: 'b', action: 'deny', match: { user: 'x' } },
      { name: 'b', key: ['user'], limit: { requests: 100, per: '1m' }, shards: 4 },
      { name: 'b', key: ['user'], limit, settle: true },
    ];
    for (const rule of notPlain) {
      const table = compileRules({ rules: [{ name: 'a', key: ['user'], limit }, rule] });
      expect({ rule: rule.name, plain: table.plain }).toEqual({ rule: 'b', plain: false });
    }
  });

  it('decides as the general path does, step by step, under random tables and requests', () => {
    fc.assert(
      fc.property(
        fc.array(ruleSpec, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(
          fc.record({
            // No user now and then: rules keyed by it have no tag and count nothing.
            user: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined, freq: 4 }),
            route: fc.constantFrom('a', 'b'),
            cost: fc.constantFrom(undefined, 1, 2),
            laterMs: fc.integer({ min: 0, max: 2500 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        (specs, dryRun, requests) => {
          const table = compileRules({
            rules: specs.map((s, i) => ({
              name: `r${i}`,
              algorithm: s.algorithm,
              key: s.key,
              ...(s.onlyRoute === undefined ? {} : { match: { route: s.onlyRoute } }),
              limit: { requests: s.requests, per: `${s.perSeconds}s` },
              mode: s.shadow ? 'shadow' : 'enforce',
              rollout: s.rollout,
              ...(s.cost === undefined ? {} : { cost: s.cost }),
            })),
          });
          expect(table.plain).toBe(true);
          let now = T0;
          const clock = () => now;
          const lean = pathOf(table, new MemoryStore(), clock, dryRun);
          const full = pathOf(general(table), new MemoryStore(), clock, dryRun);
          for (const r of requests) {
            now += r.laterMs;
            const descriptors =
              r.user === undefined ? { route: r.route } : { user: `u${r.user}`, route: r.route };
            const opts = r.cost === undefined ? undefined : { cost: r.cost };
            expect(decideOne(lean.path, descriptors, opts)).toEqual(decideOne(full.path, descriptors, opts));
          }
          expect(lean.pools.taken).toBe(0);
          expect(full.pools.taken).toBe(requests.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("turns a store that throws into the general path's failed-open decision, reported", () => {
    const table = compileRules({ rules: [{ name: 'a', key: ['user'], limit: { requests: 1, per: '1m' } }] });
    class Broken extends MemoryStore {
      override evaluateNow(): never {
        throw new Error('broken');
      }
    }
    const lean = pathOf(table, new Broken(), () => T0);
    const full = pathOf(general(table), new Broken(), () => T0);
    const decision = decideOne(lean.path, { user: 'u' });
    expect(decision).toEqual(decideOne(full.path, { user: 'u' }));
    expect(decision).toMatchObject({ allowed: true, failedOpen: true, reason: 'store_error' });
    expect(lean.pools.taken).toBe(0);
    expect(lean.path.calls.store.failingSince).toBe(T0);
  });
});

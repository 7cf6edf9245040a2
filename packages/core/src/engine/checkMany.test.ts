import { describe, expect, it } from 'vitest';
import { type Check, compileRules, createLimiter, type Decision, MemoryStore, type Store } from '../index.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A real MemoryStore behind a store that records each evaluate call (so the engine awaits it, as a remote one). */
function recording() {
  const inner = new MemoryStore();
  const calls: Check[][] = [];
  const store: Store = {
    evaluate: (checks, now) => {
      calls.push([...checks]);
      return inner.evaluate(checks, now);
    },
    release: (leases, now) => inner.release(leases, now),
    close: () => inner.close(),
  };
  return { store, calls };
}

const RULES = compileRules({
  domain: 'many',
  rules: [
    { name: 'per_key', match: { auth: 'api_key' }, key: ['api_key'], limit: { requests: 3, per: '60s' } },
    { name: 'per_route', match: { route: '/search' }, global: true, limit: { requests: 2, per: '60s' } },
    { name: 'blocked', match: { route: '/admin' }, action: 'deny' },
    {
      name: 'watched',
      match: { route: '/watched' },
      global: true,
      mode: 'shadow',
      limit: { requests: 1, per: '60s' },
    },
  ],
});

const KEY = { auth: 'api_key', api_key: 'k1' };
const SEARCH = { route: '/search' };

function limiterOn(store: Store = recording().store) {
  return createLimiter({ rules: RULES, store, clock: () => T0, logger: { warn() {} } });
}

const remainingOf = (decision: Decision | undefined, rule: string) =>
  decision?.results.find((result) => result.rule === rule)?.remaining;

describe('limiter.checkMany', () => {
  it("sends every set's checks in one store call and answers one decision per set, in order", async () => {
    const { store, calls } = recording();
    const limiter = limiterOn(store);
    const decisions = await limiter.checkMany([{ descriptors: KEY }, { descriptors: SEARCH, cost: 2 }]);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.map((check) => [check.rule, check.cost])).toEqual([
      ['per_key', 1],
      ['per_route', 2],
    ]);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true]);
    expect(decisions.map((decision) => decision.rule)).toEqual(['per_key', 'per_route']);
    expect(remainingOf(decisions[0], 'per_key')).toBe(2);
    expect(remainingOf(decisions[1], 'per_route')).toBe(0);
  });

  it('counts nothing of any set when one set is denied, and says which set', async () => {
    const limiter = limiterOn();
    await limiter.checkMany([{ descriptors: SEARCH, cost: 2 }]);
    const decisions = await limiter.checkMany([{ descriptors: KEY }, { descriptors: SEARCH }]);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, false]);
    expect(decisions[1]?.rule).toBe('per_route');
    // per_key was not spent by the denied call: 2 left after this one, as after a first request.
    const after = await limiter.check(KEY);
    expect(after.remaining).toBe(2);
  });

  it('answers a deny rule of one set with no store call at all', async () => {
    const { store, calls } = recording();
    const limiter = limiterOn(store);
    const decisions = await limiter.checkMany([{ descriptors: KEY }, { descriptors: { route: '/admin' } }]);
    expect(calls).toHaveLength(0);
    expect(decisions[1]).toMatchObject({ allowed: false, action: 'deny', rule: 'blocked' });
    expect(decisions[0]?.allowed).toBe(true);
    expect((await limiter.check(KEY)).remaining).toBe(2);
  });

  it('reports a shadow denial without denying the call', async () => {
    const limiter = limiterOn();
    const watched = { route: '/watched' };
    await limiter.checkMany([{ descriptors: watched }]);
    const decisions = await limiter.checkMany([{ descriptors: KEY }, { descriptors: watched }]);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true]);
    expect(decisions[1]?.results[0]?.shadowDenied).toBe(true);
    expect((await limiter.check(KEY)).remaining).toBe(1);
  });

  it('leaves out the rules a matched rule replaces, for every set, before counting', async () => {
    const { store, calls } = recording();
    const limiter = limiterOn(store);
    const replaces = new Map([['per_key', ['per_route']]]);
    const decisions = await limiter.checkMany([{ descriptors: SEARCH }, { descriptors: KEY }], { replaces });
    expect(calls[0]?.map((check) => check.rule)).toEqual(['per_key']);
    expect(decisions[0]?.results).toEqual([]);
    expect(decisions[0]?.allowed).toBe(true);
    // Without the replacing rule in the call, the replaced one counts again.
    const alone = await limiter.checkMany([{ descriptors: SEARCH }], { replaces });
    expect(alone[0]?.rule).toBe('per_route');
  });

  it('matches every set against the one table the call started with', async () => {
    const { store, calls } = recording();
    const limiter = limiterOn(store);
    const pending = limiter.checkMany([{ descriptors: KEY }, { descriptors: SEARCH }]);
    limiter.setRules(compileRules({ domain: 'many', rules: [] }));
    const decisions = await pending;
    expect(decisions.map((decision) => decision.version)).toEqual([RULES.version, RULES.version]);
    expect(calls[0]).toHaveLength(2);
  });

  it('a call denied by one set holds no lease of another, in the store or in the decisions', async () => {
    const rules = compileRules({
      domain: 'many',
      rules: [
        { name: 'exports', key: ['user'], algorithm: 'concurrency', limit: { concurrent: 1, lease: '30s' } },
        { name: 'per_route', match: { route: '/search' }, global: true, limit: { requests: 1, per: '60s' } },
      ],
    });
    const leases: number[] = [];
    const limiter = createLimiter({
      rules,
      clock: () => T0,
      observer: { onLeases: (_, delta) => leases.push(delta) },
      logger: { warn() {} },
    });
    await limiter.checkMany([{ descriptors: SEARCH }]);
    const denied = await limiter.checkMany([{ descriptors: { user: 'u' } }, { descriptors: SEARCH }]);
    expect(denied.map((decision) => decision.allowed)).toEqual([true, false]);
    expect(denied[0]?.leases).toEqual([]);
    expect(leases).toEqual([]);
    // The one lease is still free: taken now, and held until released.
    const taken = await limiter.checkMany([{ descriptors: { user: 'u' } }]);
    expect(taken[0]?.leases).toHaveLength(1);
    expect((await limiter.check({ user: 'u' })).allowed).toBe(false);
    await limiter.release(taken[0]!);
    expect(leases).toEqual([1, -1]);
  });

  it('rejects an invalid cost before any store call', async () => {
    const { store, calls } = recording();
    const limiter = limiterOn(store);
    await expect(
      limiter.checkMany([{ descriptors: KEY }, { descriptors: SEARCH, cost: -1 }]),
    ).rejects.toThrow(/cost must be a non-negative integer/);
    expect(calls).toHaveLength(0);
  });

  it('answers a set no rule matches with no results, and an empty call with none', async () => {
    const limiter = limiterOn(new MemoryStore());
    const decisions = await limiter.checkMany([{ descriptors: { route: '/other' } }, { descriptors: KEY }]);
    expect(decisions[0]).toMatchObject({ allowed: true, results: [] });
    expect(decisions[1]?.remaining).toBe(2);
    expect(await limiter.checkMany([])).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { Decision } from '../observe/contract.js';
import { guardObserver } from '../observe/guarded.js';
import { compileRules } from '../rules/compile.js';
import type { Check, CheckResult, Lease, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { TagCache } from '../store/tags.js';
import { LocalLeases } from './localLeases.js';
import type { RequestPath } from './pathParts.js';
import { planChecks } from './plan.js';
import { actOn, byScope, decideOne, LeaseLedger, matchedRules } from './requestPath.js';
import { StoreCaller } from './storeCall.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

const rules = compileRules({
  rules: [
    { name: 'per_user', key: ['user'], limit: { requests: 2, per: '1m' } },
    { name: 'in_process', key: ['user'], limit: { requests: 5, per: '1m' }, scope: 'local' },
  ],
});
const routeRules = compileRules({
  rules: [{ name: 'route_rule', key: ['user'], limit: { requests: 1, per: '1m' } }],
});
const actionRules = compileRules({
  rules: [
    { name: 'blocked', action: 'deny', match: { user: 'mallory' } },
    { name: 'watched', action: 'deny', match: { user: 'eve' }, mode: 'shadow' },
    { name: 'trusted', action: 'allow', match: { user: 'alice' } },
    { name: 'per_user', key: ['user'], limit: { requests: 2, per: '1m' } },
  ],
});

function planned(descriptors: Record<string, string>) {
  return planChecks(
    matchedRules(rules, descriptors, {}, T0, undefined),
    descriptors,
    1,
    new TagCache(undefined),
  );
}

/** A store of neither class nor promise: it declares `evaluateNow` and counts how it was called. */
function inProcessStore() {
  const inner = new MemoryStore();
  const calls = { now: 0, evaluate: 0 };
  const store: Store & { evaluateNow(checks: readonly Check[], now: number): CheckResult[] } = {
    evaluate: (checks, now) => {
      calls.evaluate++;
      return inner.evaluate(checks, now);
    },
    evaluateNow: (checks, now) => {
      calls.now++;
      return inner.evaluateNow(checks, now);
    },
    release: (leases, now) => inner.release(leases, now),
    close: () => inner.close(),
  };
  return { store, calls };
}

function pathOf(store: Store, table = rules): RequestPath {
  const observer = guardObserver();
  const clock = () => T0;
  const local = new MemoryStore();
  return {
    table,
    lists: undefined,
    dryRun: false,
    tags: new TagCache(undefined),
    pools: new LocalLeases(),
    calls: { store: new StoreCaller(store, observer, clock), local: new StoreCaller(local, observer, clock) },
    stores: { store, local },
    observer,
    clock,
  };
}

describe('the request path, step by step', () => {
  it('byScope: checks of local rules apart from the store ones, the same array when all go to one', () => {
    const both = planned({ user: 'u' });
    const [remote, local] = byScope(both);
    expect(remote.map((p) => p.rule.name)).toEqual(['per_user']);
    expect(local.map((p) => p.rule.name)).toEqual(['in_process']);
    const storeOnly = both.filter((p) => p.rule.scope === 'store');
    expect(byScope(storeOnly)[0]).toBe(storeOnly);
    expect(byScope(storeOnly)[1]).toEqual([]);
    expect(byScope(local)[1]).toBe(local);
  });

  it("matchedRules: the limiter's rules then the route's; global: false leaves the limiter's out", () => {
    const user = { user: 'u' };
    expect(matchedRules(rules, user, {}, T0, undefined).map((r) => r.name)).toEqual([
      'per_user',
      'in_process',
    ]);
    expect(matchedRules(rules, user, { rules: routeRules }, T0, undefined).map((r) => r.name)).toEqual([
      'per_user',
      'in_process',
      'route_rule',
    ]);
    expect(
      matchedRules(rules, user, { rules: routeRules, global: false }, T0, undefined).map((r) => r.name),
    ).toEqual(['route_rule']);
  });

  it('actOn: a deny decides with no count, an allow leaves nothing to count, a shadow deny is shown beside', () => {
    const match = (user: string) => matchedRules(actionRules, { user }, {}, T0, undefined);
    const denied = actOn(match('mallory'), 'v1', false);
    expect(denied.decision).toMatchObject({ allowed: false, rule: 'blocked', action: 'deny', version: 'v1' });
    const exempt = actOn(match('alice'), 'v1', false);
    expect(exempt.decision).toMatchObject({ allowed: true, rule: 'trusted', action: 'allow' });
    const shadowed = actOn(match('eve'), 'v1', false);
    expect(shadowed.decision).toBeUndefined();
    expect(shadowed.counted?.map((r) => r.name)).toEqual(['per_user']);
    expect(shadowed.extra).toMatchObject([{ rule: 'watched', shadowDenied: true }]);
    expect(actOn(match('bob'), 'v1', false)).toMatchObject({ extra: undefined });
  });

  it('decideOne: a store declaring evaluateNow (no MemoryStore class) answers without a promise', () => {
    const { store, calls } = inProcessStore();
    const path = pathOf(store);
    const first = decideOne(path, { user: 'u' });
    expect(first).not.toBeInstanceOf(Promise);
    expect(first).toMatchObject({ allowed: true, remaining: 1 });
    decideOne(path, { user: 'u' });
    expect(decideOne(path, { user: 'u' })).toMatchObject({ allowed: false, rule: 'per_user' });
    expect(calls).toEqual({ now: 3, evaluate: 0 });
  });

  it('decideOne: a store without evaluateNow is awaited, and decides the same', async () => {
    const memory = new MemoryStore();
    const remote: Store = {
      evaluate: (checks, now) => memory.evaluate(checks, now),
      release: (leases, now) => memory.release(leases, now),
      close: () => memory.close(),
    };
    const path = pathOf(remote);
    const first = decideOne(path, { user: 'u' });
    expect(first).toBeInstanceOf(Promise);
    await first;
    await decideOne(path, { user: 'u' });
    expect(await decideOne(path, { user: 'u' })).toMatchObject({ allowed: false, rule: 'per_user' });
  });
});

describe('LeaseLedger', () => {
  const lease = (id: string, refund: boolean): Lease => ({
    rule: 'r',
    tag: 't',
    algorithm: refund ? 'leaky_bucket' : 'concurrency',
    id,
    scope: 'store',
    ...(refund ? { refund: { cost: 1, params: { limit: 1, windowMs: 1000, burst: 1 } } } : {}),
  });
  const decision = (leases: Lease[]) => ({ leases }) as unknown as Decision;

  it('gives leases back once on release; a cancel after it gives back only the queue places', () => {
    const ledger = new LeaseLedger();
    const d = decision([lease('a', false), lease('', true)]);
    expect(ledger.toRelease(d).map((l) => l.id)).toEqual(['a']);
    expect(ledger.toRelease(d)).toEqual([]);
    expect(ledger.toCancel(d).map((l) => l.id)).toEqual(['']);
    expect(ledger.toCancel(d)).toEqual([]);
  });

  it('a cancel first gives back everything, once; a release after it gives back nothing', () => {
    const ledger = new LeaseLedger();
    const d = decision([lease('a', false), lease('', true)]);
    expect(ledger.toCancel(d).map((l) => l.id)).toEqual(['a', '']);
    expect(ledger.toRelease(d)).toEqual([]);
    expect(ledger.toCancel(d)).toEqual([]);
  });

  it('keeps no record of decisions without leases', () => {
    const ledger = new LeaseLedger();
    const none = decision([]);
    expect(ledger.toRelease(none)).toEqual([]);
    expect(ledger.toCancel(none)).toEqual([]);
  });
});

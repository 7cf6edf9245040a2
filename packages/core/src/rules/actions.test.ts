import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { compileRules, createLimiter, type Decision, MemoryStore, type Store, valueList } from '../index.js';
import type { RuleSpec } from './schema.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A real MemoryStore, and the rules of each call it gets. */
function recordingStore(): Store & { calls: string[][] } {
  const inner = new MemoryStore();
  const calls: string[][] = [];
  return {
    calls,
    evaluate: (checks, now) => {
      calls.push(checks.map((check) => check.rule));
      return inner.evaluate(checks, now);
    },
    release: (leases, now) => inner.release(leases, now),
    close: () => inner.close(),
  };
}

const tight = { requests: 1, per: '1h' };
const RULES: RuleSpec[] = [
  { name: 'per_ip', key: ['ip'], limit: tight },
  { name: 'per_tenant', match: { tenant: { not: ['internal'] } }, key: ['tenant'], limit: tight },
  { name: 'blocked', match: { ip: { list: 'blocked_ips' } }, action: 'deny' },
  { name: 'office', match: { ip: ['192.0.2.0/24'] }, action: 'allow' },
  { name: 'monitoring', match: { ip: '198.51.100.10' }, action: 'allow', exempt: ['per_ip', 'blocked'] },
  { name: 'scanners', match: { ip: '203.0.113.0/24' }, action: 'deny', mode: 'shadow' },
];

function setUp(options: { dryRun?: boolean } = {}) {
  const store = recordingStore();
  const limiter = createLimiter({
    rules: compileRules({ rules: RULES }),
    store,
    clock: () => T0,
    lists: { blocked_ips: valueList(['198.51.100.0/24', '192.0.2.66']) },
    ...options,
  });
  return { store, limiter };
}

const twice = async (limiter: ReturnType<typeof setUp>['limiter'], descriptors: Record<string, string>) => {
  const first = await limiter.check(descriptors);
  return [first, await limiter.check(descriptors)] as const;
};

describe('action: deny', () => {
  it('refuses a listed client with the rule id and no wait, without a store call', async () => {
    const { store, limiter } = setUp();
    const decision = await limiter.check({ ip: '198.51.100.77', tenant: 'acme' });
    expect(decision).toMatchObject({
      allowed: false,
      action: 'deny',
      reason: 'deny',
      rule: 'blocked',
      retryAfterMs: Number.POSITIVE_INFINITY,
      leases: [],
    });
    expect(decision.results).toEqual([
      expect.objectContaining({ rule: 'blocked', action: 'deny', allowed: false }),
    ]);
    expect(store.calls).toEqual([]);
  });

  it('in shadow mode reports the would-be denial and counts the other rules', async () => {
    const { store, limiter } = setUp();
    const [first, second] = await twice(limiter, { ip: '203.0.113.5', tenant: 'acme' });
    expect(first.allowed).toBe(true);
    expect(first.action).toBeUndefined();
    expect(first.results.find((r) => r.rule === 'scanners')).toMatchObject({
      shadowDenied: true,
      mode: 'shadow',
    });
    expect(second).toMatchObject({ allowed: false, reason: 'limit' });
    expect(store.calls).toEqual([
      ['per_ip', 'per_tenant'],
      ['per_ip', 'per_tenant'],
    ]);
  });

  it('under dryRun is reported, never acted on', async () => {
    const { limiter } = setUp({ dryRun: true });
    const decision = await limiter.check({ ip: '198.51.100.77', tenant: 'acme' });
    expect(decision.allowed).toBe(true);
    expect(decision.results.find((r) => r.rule === 'blocked')).toMatchObject({ shadowDenied: true });
  });
});

describe('action: allow', () => {
  it('exempts the request from every other rule, deny rules included, with no store call', async () => {
    const { store, limiter } = setUp();
    const decisions: Decision[] = [];
    // 192.0.2.66 is on the block list too: the allow list wins.
    for (let i = 0; i < 3; i++) decisions.push(await limiter.check({ ip: '192.0.2.66', tenant: 'acme' }));
    for (const decision of decisions) {
      expect(decision).toMatchObject({ allowed: true, action: 'allow', rule: 'office', results: [] });
    }
    expect(store.calls).toEqual([]);
  });

  it('with exempt lifts only the rules it names', async () => {
    const { store, limiter } = setUp();
    const [first, second] = await twice(limiter, { ip: '198.51.100.10', tenant: 'acme' });
    // On the block list, but exempt from it; exempt from per_ip; per_tenant still counts.
    expect(first).toMatchObject({ allowed: true, rule: 'per_tenant' });
    expect(first.action).toBeUndefined();
    expect(second).toMatchObject({ allowed: false, rule: 'per_tenant', reason: 'limit' });
    expect(store.calls).toEqual([['per_tenant'], ['per_tenant']]);
  });
});

describe('explain', () => {
  it('shows actions, what decides, and which rules an allow rule lifts', () => {
    const { limiter } = setUp();
    const denied = limiter.explain({ ip: '198.51.100.77', tenant: 'acme' });
    expect(denied.decidedBy).toEqual({ rule: 'blocked', action: 'deny' });
    expect(denied.rules.map((r) => [r.rule, r.action])).toEqual([
      ['per_ip', 'limit'],
      ['per_tenant', 'limit'],
      ['blocked', 'deny'],
    ]);
    const allowed = limiter.explain({ ip: '192.0.2.66', tenant: 'acme' });
    expect(allowed.decidedBy).toEqual({ rule: 'office', action: 'allow' });
    expect(allowed.rules.filter((r) => r.exemptedBy === 'office').map((r) => r.rule)).toEqual([
      'per_ip',
      'per_tenant',
      'blocked',
    ]);
    const partly = limiter.explain({ ip: '198.51.100.10', tenant: 'acme' });
    expect(partly.decidedBy).toBeUndefined();
    expect(partly.rules.map((r) => [r.rule, r.exemptedBy])).toEqual([
      ['per_ip', 'monitoring'],
      ['per_tenant', undefined],
      ['blocked', 'monitoring'],
      ['monitoring', undefined],
    ]);
  });
});

describe('lists given to the limiter', () => {
  it('refuses rules naming a list it was not given, at start and on setRules', () => {
    const rules = compileRules({ rules: RULES });
    expect(() => createLimiter({ rules })).toThrow(
      new ConfigError(
        'the rules name the list blocked_ips, which the limiter was not given (lists option; none was given)',
      ),
    );
    const limiter = createLimiter({ rules: compileRules({ rules: [RULES[0]!] }), lists: {} });
    expect(() => limiter.setRules(rules)).toThrow(/the list blocked_ips/);
    expect(() => createLimiter({ rules, lists: { blocked_ips: ['1.2.3.4'] as never } })).toThrow(
      /lists\.blocked_ips is not a list/,
    );
  });
});

describe('two limiters sharing a store and action rules', () => {
  it('share no counter, so no SLUICE_STORE_SHARED notice', () => {
    const store = new MemoryStore();
    const rules = compileRules({
      domain: 'shared_actions',
      rules: [
        { name: 'blocked', match: { ip: '198.51.100.0/24' }, action: 'deny' },
        { name: 'office', match: { ip: '192.0.2.0/24' }, action: 'allow' },
      ],
    });
    const lines: string[] = [];
    const logger = { warn: (line: string) => lines.push(line) };
    const limiters = [createLimiter({ rules, store, logger }), createLimiter({ rules, store, logger })];
    expect(lines).toEqual([]);
    for (const limiter of limiters) void limiter.close();
  });
});

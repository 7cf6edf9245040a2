import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { createLimiter, type Limiter } from '../engine/engine.js';
import { compileRules } from '../rules/compile.js';
import type { CompiledRule } from '../rules/contract.js';
import type { RuleSpec } from '../rules/schema.js';
import type { Check, CheckResult, Lease, Store } from '../store/contract.js';
import { MemoryStore } from '../store/memory.js';
import { tagFor } from '../store/tags.js';
import { type GatewayBoard, parseBoard } from './board.js';
import { mergeBoards } from './merge.js';

const SECRET = 'watch-secret';

const RULES: RuleSpec[] = [
  { name: 'per_key', key: ['api_key'], limit: { requests: 3, per: '60s' } },
  { name: 'per_key_shadow', key: ['api_key'], limit: { requests: 2, per: '60s' }, mode: 'shadow' },
];

function limiterOf(rules: RuleSpec[], options: Partial<Parameters<typeof createLimiter>[0]> = {}) {
  return createLimiter({ rules: compileRules({ domain: 'watch', rules }), keySecret: SECRET, ...options });
}

async function send(limiter: Limiter, key: string, n: number, route = '/search'): Promise<void> {
  for (let i = 0; i < n; i++) await limiter.check({ api_key: key, route });
}

function ruleOf(board: GatewayBoard, name: string) {
  const rule = board.rules.find((r) => r.rule === name);
  if (rule === undefined) throw new Error(`no rule ${name} on the board`);
  return rule;
}

const tag = (limiter: Limiter, rule: string, key: string) =>
  tagFor(limiter.rules.rules.find((r) => r.name === rule) as CompiledRule, { api_key: key }, SECRET)!;

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('timed out');
}

describe('limiter.hotKeys() on MemoryStore', () => {
  it('counts each rule by hashed key: requests, denials, shadow denials, routes, the rule version', async () => {
    const limiter = limiterOf(RULES);
    await send(limiter, 'alice', 6);
    await send(limiter, 'bob', 2, '/export');
    const board = limiter.hotKeys()!;
    expect(board.domain).toBe('watch');
    expect(board.version).toBe(limiter.version);
    const enforced = ruleOf(board, 'per_key');
    expect(enforced).toMatchObject({
      requests: 8,
      denied: 3,
      shadowDenied: 0,
      failedOpen: 0,
      mode: 'enforce',
    });
    expect(enforced.keys.keys).toEqual([
      [tag(limiter, 'per_key', 'alice'), 6, 0, expect.any(Number)],
      [tag(limiter, 'per_key', 'bob'), 2, 0, expect.any(Number)],
    ]);
    expect(enforced.denials.keys.map((k) => k.slice(0, 2))).toEqual([[tag(limiter, 'per_key', 'alice'), 3]]);
    expect(enforced.routes).toEqual([
      ['/search', 6, 3],
      ['/export', 2, 0],
    ]);
    expect(enforced.version).toMatch(/^[\w-]{8}$/);
    // The shadow rule denies nothing and counts what it would have denied (alice's 4th: her 3 denied requests
    // were counted by nothing, the enforcing rule having denied them).
    const shadow = ruleOf(board, 'per_key_shadow');
    expect(shadow.mode).toBe('shadow');
    expect(shadow.denied).toBe(0);
    expect(shadow.shadowDenied).toBeGreaterThan(0);
    expect(shadow.denials.keys[0]![0]).toBe(tag(limiter, 'per_key_shadow', 'alice'));
    // Tags only: no raw key anywhere on the board.
    expect(JSON.stringify(board)).not.toMatch(/alice|bob/);
  });

  it('is off with watch: false, and refuses a misspelt watch option with a did-you-mean', () => {
    expect(limiterOf(RULES, { watch: false }).hotKeys()).toBeUndefined();
    expect(() => limiterOf(RULES, { watch: { key: 8 } as never })).toThrow(/did you mean "keys"/);
    expect(() => limiterOf(RULES, { watch: { keys: 0 } })).toThrow(ConfigError);
    expect(() => limiterOf(RULES, { watch: { gateway: 'has space' } })).toThrow(/watch.gateway/);
  });

  it('keeps k keys per rule whatever the number of keys, with the bound N/k', async () => {
    const limiter = limiterOf(
      [{ name: 'per_key', key: ['api_key'], limit: { requests: 1000, per: '60s' } }],
      {
        watch: { keys: 4 },
      },
    );
    for (let i = 0; i < 20; i++) await send(limiter, `k${i}`, i < 2 ? 30 : 1);
    const rule = ruleOf(limiter.hotKeys()!, 'per_key');
    expect(rule.keys.keys).toHaveLength(4);
    expect(rule.keys.total).toBe(78);
    expect(rule.keys.floor).toBeLessThanOrEqual(78 / 4);
    expect(rule.keys.keys.slice(0, 2).map((k) => [k[0], k[1]])).toEqual(
      expect.arrayContaining([
        [tag(limiter, 'per_key', 'k0'), 30],
        [tag(limiter, 'per_key', 'k1'), 30],
      ]),
    );
  });

  it('feeds the general path too: a sharded rule counts its key, not its sub-counters', async () => {
    const limiter = limiterOf([
      { name: 'sharded', key: ['api_key'], limit: { requests: 100, per: '60s' }, shards: 4 },
    ]);
    await send(limiter, 'carol', 12);
    const rule = ruleOf(limiter.hotKeys()!, 'sharded');
    expect(rule.keys.keys.map((k) => [k[0], k[1]])).toEqual([[tag(limiter, 'sharded', 'carol'), 12]]);
  });

  it("times a remote store's calls and counts its failures on the board", async () => {
    const inner = new MemoryStore();
    let failing = false;
    // A store that answers through promises, as a remote one does.
    const remote: Store = {
      evaluate: (checks: readonly Check[], now: number): Promise<CheckResult[]> =>
        failing ? Promise.reject(new Error('down')) : inner.evaluate(checks, now),
      release: (leases: readonly Lease[], now: number) => inner.release(leases, now),
      close: () => inner.close(),
    };
    const limiter = limiterOf(RULES, { store: remote });
    await send(limiter, 'dave', 2);
    failing = true;
    await send(limiter, 'dave', 1);
    const board = limiter.hotKeys()!;
    expect(board.store.calls).toBe(2);
    expect(board.store.meanMs).toBeGreaterThanOrEqual(0);
    expect(board.store.errors).toBe(1);
    expect(ruleOf(board, 'per_key').failedOpen).toBe(1);
  });
});

describe('publishing to the store board', () => {
  it('two limiters on one MemoryStore publish their boards; merged, their counts add up', async () => {
    const store = new MemoryStore();
    const watch = (gateway: string) => ({ publish: true, intervalMs: 100, gateway });
    // Two gateways in one process, on one store: counting a rule twice is what they are here for.
    const shared = { store, silence: ['SLUICE_STORE_SHARED'] as const };
    const a = limiterOf(RULES, { ...shared, watch: watch('gw-a') });
    const b = limiterOf(RULES, { ...shared, watch: watch('gw-b') });
    try {
      await send(a, 'erin', 2);
      await send(b, 'erin', 1);
      await send(b, 'frank', 1);
      const boards = await until(async () => {
        const read = (await store.board.read(Date.now())).map((text) => parseBoard(text)!);
        const total = read.reduce((sum, board) => sum + ruleOf(board, 'per_key').requests, 0);
        return read.length === 2 && total === 4 ? read : undefined;
      });
      const merged = mergeBoards(boards);
      expect(merged.gateways.map((g) => g.gateway)).toEqual(['gw-a', 'gw-b']);
      expect(merged.mixed).toBe(false);
      const rule = merged.rules.find((r) => r.rule === 'per_key')!;
      expect(rule.requests).toBe(4);
      expect(rule.keys.bound).toBe(0);
      expect(rule.keys.keys.map((k) => [k.tag, k.count, k.gateways])).toEqual([
        [tag(a, 'per_key', 'erin'), 3, 2],
        [tag(a, 'per_key', 'frank'), 1, 1],
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('flags gateways on different rules versions', () => {
    const board = (gateway: string, version: string, ruleVersion: string): GatewayBoard => ({
      ...limiterOf(RULES).hotKeys()!,
      gateway,
      version,
      rules: [{ ...ruleOf(limiterOf(RULES).hotKeys()!, 'per_key'), version: ruleVersion }],
    });
    const merged = mergeBoards([
      board('gw-a', 'v1', 'r1'),
      board('gw-b', 'v2', 'r2'),
      board('gw-c', 'v2', 'r2'),
    ]);
    expect(merged.mixed).toBe(true);
    expect(merged.domains[0]!.versions).toEqual([
      { version: 'v2', gateways: ['gw-b', 'gw-c'] },
      { version: 'v1', gateways: ['gw-a'] },
    ]);
    expect(merged.rules[0]!.mixed).toBe(true);
  });

  it('refuses publish on a store without a board', () => {
    const inner = new MemoryStore();
    const bare: Store = {
      evaluate: (checks, now) => inner.evaluate(checks, now),
      release: (leases, now) => inner.release(leases, now),
      close: () => inner.close(),
    };
    expect(() => limiterOf(RULES, { store: bare, watch: { publish: true } })).toThrow(
      /needs a store with a board/,
    );
  });
});

import { compileRules, type RuleSpec, tagFor } from '@sluice/core';
import { describe, expect, test } from 'vitest';
import { createReplay } from './replayer.js';
import { RETRY_AFTER_LABELS } from './retryAfter.js';

const T0 = Date.UTC(2026, 2, 3, 9, 0, 0);
const rulesOf = (...rules: RuleSpec[]) => compileRules({ domain: 'unit', rules });
const one = (spec: Partial<RuleSpec>): RuleSpec =>
  ({
    name: 'r',
    match: {},
    key: ['ip'],
    limit: { requests: 5, per: '1m' },
    ...spec,
  }) as RuleSpec;

function replay(
  rules: ReturnType<typeof rulesOf>,
  times: readonly number[],
  ip = '192.0.2.1',
  showKeys = false,
) {
  const r = createReplay(rules, { showKeys });
  for (const time of times) r.add({ time, descriptors: { ip } });
  return r.finish();
}

describe('accuracy against the exact sliding log', () => {
  test('fixed_window: the boundary burst is counted as false allows, with the peak it reached', () => {
    // 5 just before a window boundary, 5 just after: the fixed window lets all 10 through in 0.2 s.
    const times = [...Array(5)]
      .map((_, i) => T0 + 59_800 + i)
      .concat([...Array(5)].map((_, i) => T0 + 60_000 + i));
    const report = replay(rulesOf(one({ algorithm: 'fixed_window' })), times);
    const rule = report.rules[0];
    expect(rule?.denied).toBe(0);
    expect(rule?.accuracy).toMatchObject({
      judged: 10,
      falseAllows: 5,
      falseDenials: 0,
      peak: 10,
      keysWithErrors: 1,
    });
    expect(rule?.accuracy?.worst).toMatchObject({ falseAllows: 5, peak: 10 });
  });

  test('sliding_window: a request refused while the exact window had room is a false denial', () => {
    // limit 2: requests at 0 s and 1 s fill the window; at 60.5 s the first has left the exact window (one
    // slot free) but the estimate still weighs the previous minute's 2 at (1 - 0.5/60): 1.98 + 1 > 2.
    const rules = rulesOf(one({ limit: { requests: 2, per: '1m' } }));
    const report = replay(rules, [T0, T0 + 1000, T0 + 60_500]);
    expect(report.rules[0]?.denied).toBe(1);
    expect(report.rules[0]?.accuracy).toMatchObject({ judged: 3, falseAllows: 0, falseDenials: 1, peak: 2 });
  });

  test('requests within the limit give no error; other algorithms are not judged', () => {
    const steady = [...Array(50)].map((_, i) => T0 + i * 15_000); // 4 a minute against 5
    expect(replay(rulesOf(one({})), steady).rules[0]?.accuracy).toMatchObject({
      falseAllows: 0,
      falseDenials: 0,
      judged: 50,
    });
    expect(replay(rulesOf(one({ algorithm: 'token_bucket' })), steady).rules[0]?.accuracy).toBeUndefined();
  });
});

describe('per-rule tallies', () => {
  test('denials, would-be denials, keys, hours and Retry-After buckets', () => {
    const rules = rulesOf(
      one({ name: 'enforced', limit: { requests: 2, per: '1m' } }),
      one({ name: 'shadowed', limit: { requests: 1, per: '1h' }, mode: 'shadow' }),
    );
    const r = createReplay(rules);
    // ip A: 4 requests in the first second of 09:00 and one at 10:30; ip B: one request.
    for (const at of [0, 100, 200, 300, 5_400_000]) r.add({ time: T0 + at, descriptors: { ip: 'A' } });
    r.add({ time: T0 + 500, descriptors: { ip: 'B' }, status: 429 });
    const report = r.finish();
    expect(report).toMatchObject({ requests: 6, denied: 2, logged429: 1, from: T0, to: T0 + 5_400_000 });
    expect(report.hours).toEqual([T0, T0 + 3_600_000]);
    const [enforced, shadowed] = report.rules;
    expect(enforced).toMatchObject({
      matched: 6,
      denied: 2,
      wouldBe: 0,
      distinctKeys: 2,
      deniedPerHour: [2, 0],
    });
    // Retry-After: the sliding estimate fits again 30 s into the next minute (2 * (1 - 30/60) + 1 <= 2): ~90 s.
    expect(enforced?.retryAfter[RETRY_AFTER_LABELS.indexOf('<=5m')]).toBe(2);
    expect(enforced?.retryAfter.reduce((a, b) => a + b, 0)).toBe(2);
    expect(enforced?.topKeys).toEqual([
      expect.objectContaining({ key: tagFor(rules.rules[0]!, { ip: 'A' }), matched: 5, denied: 2 }),
    ]);
    // The shadow rule counts only requests that went through (a denied request consumes nothing anywhere):
    // A's first is allowed, its 2nd is a would-be denial, 3rd and 4th were denied by `enforced` and never
    // committed, but are still judged (would-be) by the shadow rule; B's first is allowed.
    expect(shadowed).toMatchObject({ denied: 0, wouldBe: 4, wouldBePerHour: [3, 1] });
  });

  test('--show-keys shows descriptor values instead of tags; a global rule is one key', () => {
    const rules = rulesOf(
      one({ limit: { requests: 1, per: '1m' } }),
      one({ name: 'all', key: [], global: true, limit: { requests: 1, per: '1m' } }),
    );
    const report = replay(rules, [T0, T0 + 1], '198.51.100.7', true);
    expect(report.rules[0]?.topKeys[0]?.key).toBe('ip=198.51.100.7');
    expect(report.rules[1]?.topKeys[0]?.key).toBe('(global)');
    expect(report.rules[1]?.distinctKeys).toBe(1);
  });

  test('a rule that matched nothing is still reported, with zeros', () => {
    const rules = rulesOf(one({ name: 'search', match: { route: '/search' } }));
    const report = replay(rules, [T0]);
    expect(report.rules).toEqual([
      expect.objectContaining({ rule: 'search', matched: 0, distinctKeys: 0, topKeys: [] }),
    ]);
  });
});

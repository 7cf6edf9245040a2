import { compileRules, type RuleSpec, tagFor } from '@sluice/core';
import { expect, test } from 'vitest';
import { createComparison } from './compare.js';

const T0 = Date.UTC(2026, 2, 3, 9, 0, 0);
const rule = (name: string, requests: number, extra: Partial<RuleSpec> = {}): RuleSpec =>
  ({ name, match: {}, key: ['ip'], limit: { requests, per: '1m' }, ...extra }) as RuleSpec;

test('counts requests whose outcome changes, by rule and key, with how they changed', () => {
  const older = compileRules({ domain: 'd', rules: [rule('per_ip', 2), rule('gone', 100)] });
  const newer = compileRules({
    domain: 'd',
    rules: [rule('per_ip', 3), rule('fresh', 1, { mode: 'shadow' })],
  });
  const c = createComparison(older, newer);
  for (let i = 0; i < 4; i++) c.add({ time: T0 + i, descriptors: { ip: 'A' } });
  c.add({ time: T0 + 10, descriptors: { ip: 'B' } });
  const report = c.finish();
  // per_ip: A's 3rd request is denied before, allowed now; its 4th is denied by both. The new shadow rule
  // allows A's first and would deny the rest: A2 goes from allowed to would-be, A3 from denied to would-be,
  // A4 stays denied. B is allowed by both.
  expect(report.transitions).toEqual(
    expect.arrayContaining([
      { from: 'allowed', to: 'would-be', count: 1 },
      { from: 'denied', to: 'would-be', count: 1 },
    ]),
  );
  expect(report.changed).toBe(2);
  const perIp = report.rules.find((r) => r.rule === 'per_ip');
  expect(perIp).toMatchObject({
    status: 'changed',
    changed: 1,
    transitions: [{ from: 'denied', to: 'allowed', count: 1 }],
  });
  expect(perIp?.topKeys).toEqual([
    {
      key: tagFor(newer.rules[0]!, { ip: 'A' }),
      changed: 1,
      transitions: [{ from: 'denied', to: 'allowed', count: 1 }],
    },
  ]);
  expect(report.rules.find((r) => r.rule === 'gone')).toMatchObject({ status: 'removed', changed: 5 });
  expect(report.rules.find((r) => r.rule === 'fresh')).toMatchObject({ status: 'added', changed: 5 });
  expect(report.old.denied).toBe(2);
  expect(report.new.denied).toBe(1);
});

test('the same rules on both sides change nothing', () => {
  const rules = compileRules({ domain: 'd', rules: [rule('per_ip', 1)] });
  const c = createComparison(rules, rules);
  for (let i = 0; i < 20; i++) c.add({ time: T0 + i * 1000, descriptors: { ip: String(i % 3) } });
  const report = c.finish();
  expect(report.changed).toBe(0);
  expect(report.rules).toEqual([
    expect.objectContaining({ rule: 'per_ip', status: 'same', changed: 0, topKeys: [] }),
  ]);
  expect(report.old.denied).toBeGreaterThan(0);
});

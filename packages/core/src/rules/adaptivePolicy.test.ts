import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { ADAPTIVE_DEFAULTS } from './adaptivePolicy.js';
import { compileRules } from './compile.js';
import { parseRules } from './parse.js';

function problemsOf(fields: string[]): string[] {
  const yaml = [
    'domain: d',
    'rules:',
    '  - name: payments',
    '    global: true',
    '    limit: {requests: 100, per: 1s}',
    ...fields,
  ].join('\n');
  try {
    parseRules(yaml, { source: 'rules.yaml' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  return [];
}

describe('adaptive and priority in a rules file', () => {
  it('compile with defaults for the steps left out', () => {
    const table = compileRules(
      parseRules(
        [
          'domain: d',
          'rules:',
          '  - name: payments',
          '    global: true',
          '    limit: {requests: 100, per: 1s}',
          '    adaptive: {error_rate: 5%, latency: {percentile: 99, max: 800ms}, floor: 0.2}',
          '    priority: {descriptor: tier, default: sheddable}',
        ].join('\n'),
      ),
    );
    const [rule] = table.rules;
    expect(rule?.adaptive).toEqual({
      ...ADAPTIVE_DEFAULTS,
      errorRate: 0.05,
      latency: { percentile: 99, maxMs: 800 },
      floor: 0.2,
    });
    expect(rule?.priority).toEqual({ class: 'sheddable', descriptor: 'tier' });
    expect(table.adaptive).toBe(true);
  });

  it('leave tables without them unflagged', () => {
    const table = compileRules({ rules: [{ name: 'r', global: true, limit: { requests: 1, per: '1s' } }] });
    expect(table.adaptive).toBe(false);
    expect(table.rules[0]).not.toHaveProperty('adaptive');
  });

  it('report each wrong field with its file position', () => {
    expect(problemsOf(['    adaptive: {decrease: 0.5}'])).toEqual([
      'rules.yaml:6:15 rules[0].adaptive: `adaptive` must name a target to watch: error_rate, latency or both',
    ]);
    expect(problemsOf(['    adaptive: {error_rate: 120%, decrease: 1, interval: 10ms}'])).toEqual([
      'rules.yaml:6:28 rules[0].adaptive.error_rate: `adaptive.error_rate` must be a percentage from 0% to 100% (say 5%), got "120%"',
      'rules.yaml:6:44 rules[0].adaptive.decrease: `adaptive.decrease` must be a number above 0 and below 1, got 1',
      'rules.yaml:6:57 rules[0].adaptive.interval: `adaptive.interval` must be a duration of at least 100ms, got "10ms"',
    ]);
    expect(problemsOf(['    priority: urgent'])).toEqual([
      'rules.yaml:6:15 rules[0].priority: `priority` must be critical, normal, sheddable or {descriptor, default}, got "urgent"',
    ]);
  });

  it('are refused on deny rules, which count nothing', () => {
    const yaml = [
      'domain: d',
      'rules:',
      '  - name: blocked',
      '    action: deny',
      '    match: {tenant: bad}',
      '    priority: critical',
    ].join('\n');
    expect(() => parseRules(yaml, { source: 'rules.yaml' })).toThrow(/priority/);
  });
});

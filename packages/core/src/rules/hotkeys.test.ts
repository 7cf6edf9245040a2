import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { parseRules } from './parse.js';
import type { RuleSpec } from './schema.js';

function problemsOf(name: string): string[] {
  const text = readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
  try {
    parseRules(text, { source: name, today: '2026-03-01' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error(`${name} parsed without errors`);
}

describe('shards and lease in the rules file', () => {
  it.each([
    [
      'shards-too-many.yaml',
      [
        'shards-too-many.yaml:5:13 rules[0].shards: 16 shards of a limit of 10 leave a sub-counter with less than 1; use at most 10',
      ],
    ],
    [
      'lease-algorithm.yaml',
      [
        'lease-algorithm.yaml:7:12 rules[0].lease: lease only applies to counted algorithms (fixed_window, first_request_window, sliding_window, sliding_log, token_bucket, gcra, quota); this rule uses leaky_bucket',
      ],
    ],
    [
      'lease-batch.yaml',
      [
        'lease-batch.yaml:7:21 rules[0].lease.batch: a batch of 50 is more than the 25 units a counter holds; use at most 25',
      ],
    ],
    [
      'lease-unknown.yaml',
      [
        'lease-unknown.yaml:6:14 rules[0].lease.bach: unknown field "bach" (did you mean "batch"?)',
        'lease-unknown.yaml:7:13 rules[0].shards: `shards` must be a whole number from 1 to 1024, got 0',
      ],
    ],
  ])('%s', (name, expected) => {
    expect(problemsOf(name)).toEqual(expected);
  });

  it('refuses a lease on a local rule and on concurrency', () => {
    const compile = (rule: Partial<RuleSpec>) => () =>
      compileRules({ rules: [{ name: 'r', key: ['ip'], limit: { requests: 10, per: '1s' }, ...rule }] });
    expect(compile({ limit: { requests: 10, per: '1s' }, scope: 'local', lease: { batch: 2 } })).toThrow(
      'rules[0].lease: a local rule makes no store call to save',
    );
    expect(compile({ limit: { concurrent: 10 }, algorithm: 'concurrency', lease: { batch: 2 } })).toThrow(
      'this rule uses concurrency',
    );
  });

  it('compiles shards and lease into the rule (and the version), leaving shards: 1 out', () => {
    const base = { name: 'everyone', global: true, key: [], limit: { requests: 1000, per: '1s' } };
    const plain = compileRules({ rules: [base] });
    const hot = compileRules({ rules: [{ ...base, shards: 8, lease: { batch: 20 } }] });
    const one = compileRules({ rules: [{ ...base, shards: 1 }] });
    expect(hot.rules[0]).toMatchObject({ shards: 8, lease: { batch: 20 } });
    expect(one.rules[0]).not.toHaveProperty('shards');
    expect(one.version).toBe(plain.version);
    expect(hot.version).not.toBe(plain.version);
  });
});

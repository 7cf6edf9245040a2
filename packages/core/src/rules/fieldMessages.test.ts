import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { parseRules } from './parse.js';

/** The problems of one rule written as `lines` (after name and key), formatted as users see them. */
function problemsOf(...lines: string[]): string[] {
  const text = ['domain: d', 'rules:', '  - name: api', '    key: [ip]', ...lines].join('\n');
  try {
    parseRules(text, { source: 'rules.yaml', today: '2026-03-01' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('parsed without errors');
}

const LIMIT = '    limit: {requests: 5, per: 1m}';

// Each numeric and enum field of a rule: a sentence naming the field, what it takes and what it got, at the
// value's line and column.
describe('a wrong field value is named in plain words, at its position', () => {
  const cases: [lines: string[], expected: string][] = [
    [
      ['    limit: 0'],
      'rules.yaml:5:12 rules[0].limit: `limit` must be {requests, per} or {concurrent, lease}, got 0',
    ],
    [
      ['    limit: {requests: 1.5, per: 1m}'],
      'rules.yaml:5:23 rules[0].limit.requests: `limit.requests` must be a whole number of at least 0, got 1.5',
    ],
    [
      ['    limit: {requests: ten, per: 1m}'],
      'rules.yaml:5:23 rules[0].limit.requests: `limit.requests` must be a whole number of at least 0, got "ten"',
    ],
    [
      ['    algorithm: token_bucket', '    limit: {requests: 5, per: 1m, burst: 0}'],
      'rules.yaml:6:42 rules[0].limit.burst: `limit.burst` must be a whole number of at least 1, got 0',
    ],
    [
      ['    limit: {requests: 5, per: 0}'],
      'rules.yaml:5:31 rules[0].limit.per: `limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got 0',
    ],
    [
      ['    algorithm: concurrency', '    limit: {concurrent: -2, lease: 1m}'],
      'rules.yaml:6:25 rules[0].limit.concurrent: `limit.concurrent` must be a whole number of at least 0, got -2',
    ],
    [
      ['    algorithm: concurrency', '    limit: {concurrent: 2, lease: 60}'],
      'rules.yaml:6:35 rules[0].limit.lease: `limit.lease` must be a duration such as 30s, 5m or 1h, got 60 (did you mean "60s"?)',
    ],
    [
      ['    algorithm: token_buckt', LIMIT],
      'rules.yaml:5:16 rules[0].algorithm: `algorithm` must be one of fixed_window, first_request_window, sliding_window, sliding_log, token_bucket, gcra, leaky_bucket, concurrency, quota, got "token_buckt" (did you mean "token_bucket"?)',
    ],
    [
      ['    mode: shaddow', LIMIT],
      'rules.yaml:5:11 rules[0].mode: `mode` must be enforce or shadow, got "shaddow" (did you mean "shadow"?)',
    ],
    [
      ['    on_store_error: fail', LIMIT],
      'rules.yaml:5:21 rules[0].on_store_error: `on_store_error` must be allow or deny, got "fail"',
    ],
    [
      ['    rollout: 150', LIMIT],
      'rules.yaml:5:14 rules[0].rollout: `rollout` must be a percentage from 0 to 100, got 150',
    ],
    [
      ['    scope: shared', LIMIT],
      'rules.yaml:5:12 rules[0].scope: `scope` must be store, local or global, got "shared"',
    ],
    [
      ['    action: lmit', LIMIT],
      'rules.yaml:5:13 rules[0].action: `action` must be limit, deny or allow, got "lmit" (did you mean "limit"?)',
    ],
    [
      ['    global: yes', LIMIT],
      'rules.yaml:5:13 rules[0].global: `global` must be true or false, got "yes"',
    ],
    [
      ['    shards: 0', LIMIT],
      'rules.yaml:5:13 rules[0].shards: `shards` must be a whole number from 1 to 1024, got 0',
    ],
    [
      ['    lease: {batch: 0}', LIMIT],
      'rules.yaml:5:20 rules[0].lease.batch: `lease.batch` must be a whole number of at least 1, got 0',
    ],
    [
      ['    cost: -1', LIMIT],
      'rules.yaml:5:11 rules[0].cost: `cost` must be a whole number, {descriptor, max} or {by, values, default}, got -1',
    ],
    [
      ['    penalty: 0', LIMIT],
      'rules.yaml:5:14 rules[0].penalty: `penalty` must be a whole number of at least 1, got 0',
    ],
    [
      ['    challenge: {after: 1, difficulty: 40}', LIMIT],
      'rules.yaml:5:39 rules[0].challenge.difficulty: `challenge.difficulty` must be a whole number from 1 to 32, got 40',
    ],
    [
      ['    priority: critcal', LIMIT],
      'rules.yaml:5:15 rules[0].priority: `priority` must be critical, normal, sheddable or {descriptor, default}, got "critcal" (did you mean "critical"?)',
    ],
    [
      ['    count: faild', LIMIT],
      'rules.yaml:5:12 rules[0].count: `count` must be failed, succeeded or a list of HTTP statuses, got "faild" (did you mean "failed"?)',
    ],
    [
      ['    escalate: []', LIMIT],
      'rules.yaml:5:15 rules[0].escalate: `escalate` must list at least one value, or be left out',
    ],
    [
      ['    adaptive: {error_rate: 5%, min_samples: 0}', LIMIT],
      'rules.yaml:5:45 rules[0].adaptive.min_samples: `adaptive.min_samples` must be a whole number of at least 1, got 0',
    ],
  ];

  it.each(cases)('%j', (lines, expected) => {
    expect(problemsOf(...lines)).toEqual([expected]);
  });
});

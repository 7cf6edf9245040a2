import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { parseRules } from './parse.js';

function problemsOf(rule: string[]): string[] {
  const yaml = ['domain: d', 'rules:', '  - name: logins', '    owner: o', '    key: [ip]', ...rule].join(
    '\n',
  );
  try {
    parseRules(yaml, { source: 'rules.yaml', today: '2026-03-01' });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  return [];
}

const LIMIT = '    limit: {requests: 5, per: 10m}';

describe('ban, escalate, penalty and count', () => {
  it('are accepted together on a rule every store enforces them for', () => {
    const rule = [
      LIMIT,
      '    ban: {after: 5, within: 10m, for: 15m}',
      '    escalate: [1h, 24h]',
      '    penalty: 2',
      '    count: failed',
    ];
    expect(problemsOf(rule)).toEqual([]);
  });

  it('penalty and idempotent do not apply to a rule holding leases', () => {
    expect(
      problemsOf([
        '    algorithm: concurrency',
        '    limit: {concurrent: 5}',
        '    penalty: 1',
        '    idempotent: 10m',
        '    ban: {after: 5, within: 10m, for: 15m}',
      ]),
    ).toEqual([
      'rules.yaml:8:14 rules[0].penalty: a concurrency rule holds leases, not counts: penalty does not apply',
      'rules.yaml:9:17 rules[0].idempotent: a concurrency rule holds a lease per request: idempotent does not apply',
    ]);
  });

  it('ban, penalty and idempotent need one counter per key: not with shards or lease', () => {
    expect(
      problemsOf([
        LIMIT,
        '    shards: 4',
        '    ban: {after: 5, within: 10m, for: 15m}',
        '    idempotent: 1m',
      ]),
    ).toEqual([
      'rules.yaml:8:10 rules[0].ban: ban needs one counter per key: it does not apply with shards',
      'rules.yaml:9:17 rules[0].idempotent: idempotent needs one counter per key: it does not apply with shards',
    ]);
    expect(problemsOf([LIMIT, '    lease: {batch: 2}', '    penalty: 2'])).toEqual([
      'rules.yaml:8:14 rules[0].penalty: penalty needs one counter per key: it does not apply with lease',
    ]);
  });

  it('idempotent is a duration, compiled to ms', () => {
    expect(problemsOf([LIMIT, '    idempotent: 10'])).toEqual([
      'rules.yaml:7:17 rules[0].idempotent: `idempotent` must be a duration such as 30s, 5m or 1h, got 10 (did you mean "10s"?)',
    ]);
    const table = compileRules({
      rules: [{ name: 'orders', key: ['ip'], limit: { requests: 5, per: '1m' }, idempotent: '10m' }],
    });
    expect(table.rules[0]).toMatchObject({ idempotentMs: 600_000 });
  });

  it('report bad shapes with clear messages', () => {
    expect(
      problemsOf([
        LIMIT,
        '    ban: {after: 0, within: 10, for: 15m, until: 1h}',
        '    escalate: [15m, 10m]',
        '    penalty: 0',
        '    count: [401, 700]',
      ]),
    ).toEqual([
      'rules.yaml:7:18 rules[0].ban.after: `ban.after` must be a whole number of at least 1, got 0',
      'rules.yaml:7:29 rules[0].ban.within: `ban.within` must be a duration such as 30s, 5m or 1h, got 10 (did you mean "10s"?)',
      'rules.yaml:7:43 rules[0].ban.until: unknown field "until"',
      'rules.yaml:9:14 rules[0].penalty: `penalty` must be a whole number of at least 1, got 0',
      'rules.yaml:10:18 rules[0].count[1]: `count[1]` must be an HTTP status from 100 to 599, got 700',
    ]);
    expect(problemsOf([LIMIT, '    count: sometimes'])).toEqual([
      'rules.yaml:7:12 rules[0].count: `count` must be failed, succeeded or a list of HTTP statuses, got "sometimes"',
    ]);
  });

  it('need a ban to escalate, and escalated bans must grow', () => {
    expect(problemsOf([LIMIT, '    escalate: [1h]'])).toEqual([
      'rules.yaml:7:15 rules[0].escalate: escalate lengthens bans: add ban: {after, within, for}',
    ]);
    expect(
      problemsOf([LIMIT, '    ban: {after: 5, within: 10m, for: 15m}', '    escalate: [10m, 1h, 1h]']),
    ).toEqual([
      'rules.yaml:8:16 rules[0].escalate[0]: 10m is not longer than 15m: escalated bans grow',
      'rules.yaml:8:25 rules[0].escalate[2]: 1h is not longer than 1h: escalated bans grow',
    ]);
  });

  it('compile into the rule', () => {
    const table = compileRules({
      rules: [
        {
          name: 'logins',
          key: ['ip'],
          limit: { requests: 5, per: '10m' },
          ban: { after: 5, within: '10m', for: '15m' },
          escalate: ['1h', '24h'],
          penalty: 2,
          count: [401, 403],
        },
      ],
    });
    expect(table.rules[0]).toMatchObject({
      ban: { after: 5, withinMs: 600_000, forMs: 900_000, escalateMs: [3_600_000, 86_400_000] },
      penalty: 2,
      count: [401, 403],
    });
  });

  it('count does not apply to a rule holding leases, nor to units leased in batches', () => {
    expect(
      problemsOf(['    algorithm: concurrency', '    limit: {concurrent: 5}', '    count: failed']),
    ).toEqual([
      'rules.yaml:8:12 rules[0].count: a concurrency rule holds leases, not counts: count does not apply',
    ]);
    expect(problemsOf([LIMIT, '    lease: {batch: 2}', '    count: failed'])).toEqual([
      'rules.yaml:8:12 rules[0].count: count refunds a request its own charge; with lease: {batch} units are spent in process',
    ]);
  });

  it('are counting fields: a deny rule refuses them', () => {
    expect(problemsOf(['    action: deny', '    penalty: 2']).slice(-1)).toEqual([
      'rules.yaml:7:5 rules[0].penalty: a deny rule counts nothing: remove penalty',
    ]);
  });
});

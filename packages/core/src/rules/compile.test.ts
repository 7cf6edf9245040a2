import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { parseRules } from './parse.js';
import type { RuleSpec } from './schema.js';

const perIp: RuleSpec = { name: 'per_ip', key: ['ip'], limit: { requests: 60, per: '60s' } };

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('no RulesError');
}

describe('compileRules from code', () => {
  it('fills defaults and converts limits to params', () => {
    const table = compileRules({ domain: 'api', rules: [perIp] });
    expect(table.domain).toBe('api');
    expect(table.rules[0]).toEqual({
      name: 'per_ip',
      match: {},
      key: ['ip'],
      global: false,
      algorithm: 'sliding_window',
      params: { limit: 60, windowMs: 60_000, burst: 60 },
      mode: 'enforce',
      rollout: 100,
      onStoreError: 'allow',
      scope: 'store',
    });
  });

  it('defaults the domain to "default"', () => {
    expect(compileRules({ rules: [perIp] }).domain).toBe('default');
  });

  it('validates with the same checks, reporting every problem by path without line numbers', () => {
    const rules = [
      { ...perIp, limit: { requests: 60, per: '60x' } },
      { name: 'per_ip', limit: { concurrent: 2 }, algorithm: 'concurrency', overrides: 'ghost' },
      { ...perIp, name: 'third', limt: 1 },
    ] as unknown as RuleSpec[];
    expect(problemsOf(() => compileRules({ rules }))).toEqual([
      '<rules> rules[0].limit.per: `limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"',
      '<rules> rules[1].key: no key descriptors: list some (key: [api_key]), or set global: true for one counter shared by all',
      '<rules> rules[1].name: duplicate rule name "per_ip" (see rules[0])',
      '<rules> rules[1].overrides: no rule is named "ghost"',
      '<rules> rules[2].limt: unknown field "limt" (did you mean "limit"?)',
    ]);
  });

  it('labels problems with the given source', () => {
    const rules = [{ ...perIp, rollout: -1 }];
    expect(problemsOf(() => compileRules({ rules }, { source: 'GET /export' }))).toEqual([
      'GET /export rules[0].rollout: `rollout` must be a percentage from 0 to 100, got -1',
    ]);
  });

  it('rejects input that is not rules at all', () => {
    expect(problemsOf(() => compileRules({} as never))).toEqual([
      '<rules> rules: missing required field "rules"',
    ]);
  });

  it('compiles every limit form', () => {
    const table = compileRules({
      rules: [
        {
          name: 'bucket',
          key: ['ip'],
          limit: { requests: 10, per: '1s', burst: 50 },
          algorithm: 'token_bucket',
        },
        { name: 'bucket_default', key: ['ip'], limit: { requests: 10, per: '1s' }, algorithm: 'gcra' },
        { name: 'leases', key: ['ip'], limit: { concurrent: 2 }, algorithm: 'concurrency' },
        { name: 'leases_30s', key: ['ip'], limit: { concurrent: 3, lease: '30s' }, algorithm: 'concurrency' },
        { name: 'monthly', key: ['api_key'], limit: { requests: 100_000, per: 'month' }, algorithm: 'quota' },
        {
          name: 'daily_duration',
          key: ['api_key'],
          limit: { requests: 1_000, per: '1d' },
          algorithm: 'quota',
        },
      ],
    });
    expect(table.rules.map((rule) => rule.params)).toEqual([
      { limit: 10, windowMs: 1_000, burst: 50 },
      { limit: 10, windowMs: 1_000, burst: 10 },
      { limit: 2, windowMs: 60_000, burst: 2 },
      { limit: 3, windowMs: 30_000, burst: 3 },
      { limit: 100_000, windowMs: 0, burst: 100_000, period: 'month' },
      { limit: 1_000, windowMs: 86_400_000, burst: 1_000 },
    ]);
  });

  it('normalises match values to lists of distinct strings and keeps optional fields', () => {
    const [rule] = compileRules({
      rules: [
        {
          name: 'r',
          match: { route: '/search', status: [200, 200, 404], beta: true },
          key: ['ip'],
          limit: { requests: 0, per: '1s' },
          cost: { by: 'method', values: { GET: 1, POST: 3 }, default: 1 },
          mode: 'shadow',
          rollout: 5,
          on_store_error: 'deny',
          owner: 'team',
          review: '2027-01-01',
          expires: '2027-01-15',
          scope: 'local',
        },
      ],
    }).rules;
    expect(rule).toMatchObject({
      match: { route: ['/search'], status: ['200', '404'], beta: ['true'] },
      cost: { by: 'method', values: { GET: 1, POST: 3 }, default: 1 },
      mode: 'shadow',
      rollout: 5,
      onStoreError: 'deny',
      owner: 'team',
      review: '2027-01-01',
      expiresAt: Date.UTC(2027, 0, 16),
      scope: 'local',
    });
  });

  it('freezes the table, its rules and everything inside them', () => {
    const table = compileRules({
      rules: [{ ...perIp, match: { route: ['/a'] }, cost: { by: 'method', values: { GET: 1 }, default: 1 } }],
    });
    const rule = table.rules[0]!;
    expect(Object.isFrozen(table)).toBe(true);
    expect(Object.isFrozen(table.rules)).toBe(true);
    for (const part of [rule, rule.match, rule.match.route, rule.key, rule.params, rule.cost]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(Object.isFrozen((rule.cost as { values: object }).values)).toBe(true);
  });

  it('does not keep references to the caller’s objects', () => {
    const cost = { by: 'method', values: { GET: 1 } as Record<string, number>, default: 1 };
    const table = compileRules({ rules: [{ ...perIp, cost }] });
    cost.values.GET = 99;
    expect(table.rules[0]?.cost).toEqual({ by: 'method', values: { GET: 1 }, default: 1 });
  });
});

describe('version', () => {
  const yaml = (limit: number, comment = '') =>
    `domain: api\n${comment}rules:\n  - name: per_ip\n    key: [ip]\n    limit: {requests: ${limit}, per: 60s}\n`;
  const versionOf = (text: string) => compileRules(parseRules(text)).version;

  it('is 12 hex digits, equal for the same rules however they are written', () => {
    const version = versionOf(yaml(60));
    expect(version).toMatch(/^[0-9a-f]{12}$/);
    expect(versionOf(yaml(60, '# a comment changes nothing\n'))).toBe(version);
    expect(compileRules({ domain: 'api', rules: [perIp] }).version).toBe(version);
    expect(
      compileRules({ domain: 'api', rules: [{ ...perIp, mode: 'enforce', algorithm: 'sliding_window' }] })
        .version,
    ).toBe(version);
  });

  it('changes with any change: a limit, the domain, a field, the order of rules', () => {
    const base = compileRules({ domain: 'api', rules: [perIp, { ...perIp, name: 'other' }] }).version;
    const variants = [
      {
        domain: 'api',
        rules: [
          { ...perIp, limit: { requests: 61, per: '60s' } },
          { ...perIp, name: 'other' },
        ],
      },
      { domain: 'web', rules: [perIp, { ...perIp, name: 'other' }] },
      {
        domain: 'api',
        rules: [
          { ...perIp, owner: 'team' },
          { ...perIp, name: 'other' },
        ],
      },
      { domain: 'api', rules: [{ ...perIp, name: 'other' }, perIp] },
    ];
    const versions = variants.map((input) => compileRules(input).version);
    expect(new Set([base, ...versions]).size).toBe(5);
  });
});

describe('limits too large to count exactly', () => {
  it('refuses a capacity whose count in ms units passes 2^53', () => {
    const rules = [{ name: 'huge', key: ['k'], limit: { requests: 200_000_000, per: '1d' } }];
    expect(() => compileRules({ rules })).toThrow(
      '<rules> rules[0].limit.requests: 200000000 per 1d is too large to count exactly: limit × window in ms must stay below 2^53',
    );
    expect(() =>
      compileRules({ rules: [{ ...rules[0]!, limit: { requests: 1_000_000, per: '1d' } }] }),
    ).not.toThrow();
  });
});

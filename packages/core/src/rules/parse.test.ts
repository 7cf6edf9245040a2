import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { MAX_RULES_BYTES } from './file.js';
import { loadRules, loadRulesSync, parseRules } from './parse.js';
import { MAX_NAME_LENGTH } from './schema.js';

const TODAY = '2026-03-01';

function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** Every problem parseRules throws for a fixture, formatted as users see them. */
function problemsOf(name: string): string[] {
  try {
    parseRules(fixture(name), { source: name, today: TODAY });
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error(`${name} parsed without errors`);
}

describe('parseRules rejects each class of error with file:line:column, path and a human message', () => {
  const cases: [fixture: string, expected: string][] = [
    // YAML syntax: the line and column where the offending text starts, not where yaml noticed it.
    [
      'syntax.yaml',
      'syntax.yaml:4:10 YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
    ['syntax-indent.yaml', 'syntax-indent.yaml:7:6 YAML: All mapping items must start at the same column'],
    ['syntax-quote.yaml', 'syntax-quote.yaml:6:14 YAML: Missing closing "quote'],
    ['syntax-tab.yaml', 'syntax-tab.yaml:4:1 YAML: Tabs are not allowed as indentation'],
    ['syntax-duplicate-key.yaml', 'syntax-duplicate-key.yaml:6:5 YAML: Map keys must be unique'],
    [
      'unknown-field.yaml',
      'unknown-field.yaml:5:5 rules[0].limt: unknown field "limt" (did you mean "limit"?)',
    ],
    [
      'bad-duration.yaml',
      'bad-duration.yaml:14:12 rules[2].limit.per: `limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"',
    ],
    ['missing-field.yaml', 'missing-field.yaml:3:5 rules[0].limit: missing required field "limit"'],
    [
      'bad-name.yaml',
      'bad-name.yaml:3:11 rules[0].name: `name` must be a rule name (lowercase letters, digits and _), got "Key-Default"',
    ],
    [
      'duplicate-name.yaml',
      'duplicate-name.yaml:6:11 rules[1].name: duplicate rule name "per_ip" (see rules[0])',
    ],
    [
      'dangling-override.yaml',
      'dangling-override.yaml:10:16 rules[1].overrides: no rule is named "key_defualt" (did you mean "key_default"?)',
    ],
    ['self-override.yaml', 'self-override.yaml:6:16 rules[0].overrides: a rule cannot override itself'],
    ['override-cycle.yaml', 'override-cycle.yaml:6:16 rules[0].overrides: override cycle: a -> c -> b -> a'],
    [
      'negative-limit.yaml',
      'negative-limit.yaml:5:24 rules[0].limit.requests: `limit.requests` must be a whole number of at least 0, got -5',
    ],
    [
      'zero-without-expiry.yaml',
      'zero-without-expiry.yaml:6:24 rules[0].limit.requests: a zero limit blocks every request; it needs an expires date',
    ],
    [
      'keyless.yaml',
      'keyless.yaml:5:10 rules[0].key: no key descriptors: list some (key: [api_key]), or set global: true for one counter shared by all',
    ],
    [
      'global-with-key.yaml',
      'global-with-key.yaml:5:13 rules[0].global: a global rule has one counter for everyone; remove key or global',
    ],
    [
      'rollout.yaml',
      'rollout.yaml:6:14 rules[0].rollout: `rollout` must be a percentage from 0 to 100, got 150',
    ],
    [
      'concurrent-sliding-window.yaml',
      'concurrent-sliding-window.yaml:5:26 rules[0].limit.concurrent: a concurrent limit needs algorithm: concurrency (this rule uses sliding_window)',
    ],
    [
      'concurrency-requests.yaml',
      'concurrency-requests.yaml:5:12 rules[0].limit: algorithm concurrency counts leases: write limit: {concurrent: N, lease: 60s}',
    ],
    [
      'mixed-limit.yaml',
      'mixed-limit.yaml:5:37 rules[0].limit.concurrent: "concurrent" does not go with the other fields: a limit is {requests, per, burst} or {concurrent, lease}',
    ],
    [
      'burst.yaml',
      'burst.yaml:5:44 rules[0].limit.burst: burst only applies to token_bucket, gcra and leaky_bucket (this rule uses sliding_window)',
    ],
    [
      'calendar-period.yaml',
      'calendar-period.yaml:5:36 rules[0].limit.per: "month" is a calendar period, only for algorithm: quota; write a duration such as 1d',
    ],
    [
      'bad-algorithm.yaml',
      'bad-algorithm.yaml:6:16 rules[0].algorithm: `algorithm` must be one of fixed_window, first_request_window, sliding_window, sliding_log, token_bucket, gcra, leaky_bucket, concurrency, quota, got "slidng_window" (did you mean "sliding_window"?)',
    ],
    [
      'bad-date.yaml',
      'bad-date.yaml:6:13 rules[0].review: `review` must be a date (YYYY-MM-DD), got "2027-02-30"',
    ],
    ['bad-cost.yaml', 'bad-cost.yaml:6:11 rules[0].cost.max: missing required field "max"'],
    [
      'bad-match.yaml',
      'bad-match.yaml:4:21 rules[0].match.route: `match.route` must list at least one value (an empty list matches nothing)',
    ],
    [
      'blank-match.yaml',
      'blank-match.yaml:5:14 rules[0].match[""]: "" is not a descriptor name: name the descriptor to match',
    ],
    [
      'bare-number-per.yaml',
      'bare-number-per.yaml:5:33 rules[0].limit.per: `limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got 60 (did you mean "60s"?)',
    ],
  ];

  it.each(cases)('%s', (name, expected) => {
    expect(problemsOf(name)).toEqual([expected]);
  });

  it('reports every problem of a file at once, in file order, without a doubled "missing limit" for a typo', () => {
    expect(problemsOf('many-errors.yaml')).toEqual([
      'many-errors.yaml:6:5 rules[0].limt: unknown field "limt" (did you mean "limit"?)',
      'many-errors.yaml:9:34 rules[1].limit.per: `limit.per` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"',
      'many-errors.yaml:10:14 rules[1].rollout: `rollout` must be a percentage from 0 to 100, got 101',
      'many-errors.yaml:11:5 rules[2].key: no key descriptors: list some (key: [api_key]), or set global: true for one counter shared by all',
      'many-errors.yaml:11:11 rules[2].name: duplicate rule name "per_key" (see rules[1])',
      'many-errors.yaml:12:26 rules[2].limit.concurrent: a concurrent limit needs algorithm: concurrency (this rule uses sliding_window)',
      'many-errors.yaml:13:16 rules[2].overrides: no rule is named "nobody"',
    ]);
  });

  it('throws a RulesError whose message lists every problem', () => {
    const error = (() => {
      try {
        parseRules(fixture('many-errors.yaml'), { source: 'many-errors.yaml', today: TODAY });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(RulesError);
    expect((error as RulesError).code).toBe('ERR_SLUICE_RULES');
    expect((error as RulesError).message.split('\n')).toHaveLength(8);
  });
});

describe('parseRules, other inputs', () => {
  it('rejects a document that is not a map', () => {
    expect(() => parseRules('', { source: 'empty.yaml' })).toThrow(
      'empty.yaml expected a map with domain and rules',
    );
    expect(() => parseRules('- a\n', { source: 'list.yaml' })).toThrow(
      'list.yaml:1:1 expected a map with domain and rules',
    );
  });

  it('checks the top level: domain required, unknown top-level fields, rules still checked', () => {
    const text = 'rulez: []\nrules:\n  - name: a\n    limit: {requests: 1, per: 1s}\n';
    expect(() => parseRules(text, { source: 'top.yaml' })).toThrow(
      [
        'invalid rules:',
        '  top.yaml:1:1 domain: missing required field "domain"',
        '  top.yaml:1:1 rulez: unknown field "rulez" (did you mean "rules"?)',
        '  top.yaml:3:5 rules[0].key: no key descriptors: list some (key: [api_key]), or set global: true for one counter shared by all',
      ].join('\n'),
    );
  });

  it('rejects duplicate YAML keys instead of keeping the last one', () => {
    const text =
      'domain: d\nrules:\n  - name: a\n    key: [ip]\n    limit: {requests: 1, per: 1s}\n    key: [api_key]\n';
    expect(() => parseRules(text, { source: 'dup.yaml' })).toThrow(
      'dup.yaml:6:5 YAML: Map keys must be unique',
    );
  });

  it('refuses a "__proto__" match field rather than dropping it and widening the rule', () => {
    const text =
      'domain: d\nrules:\n  - name: a\n    match: {__proto__: x}\n    key: [ip]\n    limit: {requests: 1, per: 1s}\n';
    expect(() => parseRules(text, { source: 'proto.yaml' })).toThrow(
      'proto.yaml:4:13 rules[0].match.__proto__: "__proto__" cannot be a descriptor name',
    );
  });

  it('says which forms a limit or cost takes when what is written fits none of them', () => {
    const text = 'domain: d\nrules:\n  - name: a\n    key: [ip]\n    limit: {}\n    cost: "3"\n';
    expect(() => parseRules(text, { source: 'forms.yaml' })).toThrow(
      [
        'invalid rules:',
        '  forms.yaml:5:12 rules[0].limit: `limit` must be {requests, per} or {concurrent, lease}, got an empty map',
        '  forms.yaml:6:11 rules[0].cost: `cost` must be a whole number, {descriptor, max} or {by, values, default}, got "3"',
      ].join('\n'),
    );
  });

  it('labels problems "<rules>" when no source is given', () => {
    expect(() => parseRules('domain: d\nrules: [{name: a, key: [ip]}]\n')).toThrow(
      '<rules>:2:9 rules[0].limit: missing required field "limit"',
    );
  });

  it('rejects a malformed today option', () => {
    expect(() => parseRules('domain: d\nrules: []\n', { today: '01/03/2026' })).toThrow(ConfigError);
  });

  it('returns rules with defaults filled in, frozen', () => {
    const doc = parseRules(
      'domain: d\nrules:\n  - name: a\n    key: [ip]\n    limit: {requests: 1, per: 1s}\n',
      {
        today: TODAY,
      },
    );
    expect(doc.domain).toBe('d');
    expect(doc.source).toBe('<rules>');
    expect(doc.rules[0]).toMatchObject({
      match: {},
      global: false,
      algorithm: 'sliding_window',
      mode: 'enforce',
      rollout: 100,
      on_store_error: 'allow',
      scope: 'store',
    });
    expect(Object.isFrozen(doc)).toBe(true);
    expect(Object.isFrozen(doc.rules[0]?.limit)).toBe(true);
  });
});

describe('warnings', () => {
  it('returns overdue reviews, missing owners and expired rules without throwing', () => {
    const doc = parseRules(fixture('warnings.yaml'), { source: 'warnings.yaml', today: TODAY });
    expect(doc.rules).toHaveLength(3);
    expect(doc.warnings.map(formatProblem)).toEqual([
      'warnings.yaml:7:13 rules[0].review: review overdue since 2026-01-01',
      'warnings.yaml:8:5 rules[1]: missing owner: say who reviews this rule',
      'warnings.yaml:16:14 rules[2].expires: expired on 2026-02-28: the rule no longer applies',
    ]);
  });

  it('judges review dates against today: a review due today or later is not overdue', () => {
    const doc = parseRules(fixture('warnings.yaml'), { source: 'warnings.yaml', today: '2025-12-31' });
    expect(doc.warnings.map((warning) => warning.message)).toEqual([
      'missing owner: say who reviews this rule',
    ]);
  });

  it('defaults today to the current UTC date', () => {
    const doc = parseRules(
      'domain: d\nrules: [{name: a, key: [ip], limit: {requests: 1, per: 1s}, review: 2000-01-01}]',
    );
    expect(doc.warnings.map((warning) => warning.message)).toContain('review overdue since 2000-01-01');
  });
});

describe('loadRules', () => {
  it('names the file path in problems', async () => {
    const path = fileURLToPath(new URL('./fixtures/bad-duration.yaml', import.meta.url));
    await expect(loadRules(path)).rejects.toThrow(
      `${path}:14:12 rules[2].limit.per: \`limit.per\` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "60x"`,
    );
  });

  it('rejects with the fs error for a missing file', async () => {
    await expect(loadRules('/nonexistent/rules.yaml')).rejects.toThrow(/ENOENT/);
  });

  it('names the working directory a missing relative path was resolved against', async () => {
    const expected = `("nope/rules.yaml" was resolved against the working directory ${process.cwd()})`;
    await expect(loadRules('nope/rules.yaml')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(loadRules('nope/rules.yaml')).rejects.toThrow(expected);
    expect(() => loadRulesSync('nope/rules.yaml')).toThrow(expected);
  });

  it(`refuses a file over ${MAX_RULES_BYTES} bytes by its size, before reading it`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rules-'));
    try {
      // 100 MB on disk and none of it written (sparse): reading it would take the test's time and memory.
      const path = join(dir, 'huge.yaml');
      writeFileSync(path, 'domain: d\n');
      truncateSync(path, 100 * 1000 * 1000);
      const message = `${path} the rules are 100000000 bytes; the limit is ${MAX_RULES_BYTES} bytes (the maxBytes option)`;
      const started = performance.now();
      await expect(loadRules(path)).rejects.toThrow(message);
      expect(() => loadRulesSync(path)).toThrow(RulesError);
      expect(performance.now() - started).toBeLessThan(1000);
      const text = `domain: d\n#${'x'.repeat(MAX_RULES_BYTES)}\n`;
      expect(() => parseRules(text, { source: 'pushed' })).toThrow(
        `pushed the rules are ${text.length} bytes`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('names', () => {
  it(`refuses a domain name over ${MAX_NAME_LENGTH} characters, without quoting it whole`, () => {
    const domain = 'd'.repeat(10 * 1024 * 1024);
    let message = '';
    try {
      compileRules({ domain, rules: [] });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      `invalid rules:\n  <rules> domain: \`domain\` must be at most ${MAX_NAME_LENGTH} characters, got ${domain.length}`,
    );
    expect(() => compileRules({ domain: 'd'.repeat(MAX_NAME_LENGTH), rules: [] })).not.toThrow();
  });

  it('refuses an over-long rule or descriptor name, and a blank match field, in code too', () => {
    const long = 'a'.repeat(MAX_NAME_LENGTH + 1);
    expect(() =>
      compileRules({
        rules: [
          { name: long, key: ['ip'], limit: { requests: 1, per: '1s' } },
          { name: 'b', key: [long], match: { '  ': 'x', [long]: 'y' }, limit: { requests: 1, per: '1s' } },
        ],
      }),
    ).toThrow(
      [
        'invalid rules:',
        `  <rules> rules[0].name: \`name\` must be at most ${MAX_NAME_LENGTH} characters, got ${long.length}`,
        '  <rules> rules[1].match["  "]: "  " is not a descriptor name: name the descriptor to match',
        `  <rules> rules[1].match.${long}: the descriptor name must be at most ${MAX_NAME_LENGTH} characters, got ${long.length}`,
        `  <rules> rules[1].key[0]: \`key[0]\` must be at most ${MAX_NAME_LENGTH} characters, got ${long.length}`,
      ].join('\n'),
    );
  });

  it('quotes a long wrong value in part', () => {
    const per = '9'.repeat(200);
    expect(() => compileRules({ rules: [{ name: 'a', key: ['ip'], limit: { requests: 1, per } }] })).toThrow(
      `rules[0].limit.per: \`limit.per\` must be a duration such as 30s, 5m or 1h (or day, week or month for a quota), got "${'9'.repeat(80)}"… (200 characters)`,
    );
  });
});

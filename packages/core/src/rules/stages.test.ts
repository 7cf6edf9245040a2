import { describe, expect, it } from 'vitest';
import { formatProblem, RulesError } from '../base/errors.js';
import { compileRules } from './compile.js';
import { parseRules } from './parse.js';

const HEAD = [
  'domain: d',
  'rules:',
  '  - name: api',
  '    owner: o',
  '    key: [ip]',
  '    limit: {requests: 5, per: 1m}',
];

function parse(lines: string[]) {
  return compileRules(
    parseRules([...HEAD, ...lines].join('\n'), { source: 'rules.yaml', today: '2026-03-01' }),
  );
}

function problemsOf(lines: string[]): string[] {
  try {
    parse(lines);
  } catch (error) {
    if (error instanceof RulesError) return error.problems.map(formatProblem);
    throw error;
  }
  return [];
}

describe('escalation stages: warn_at and challenge', () => {
  it('compile with their defaults', () => {
    const rule = parse([
      '    warn_at: 80%',
      '    ban: {after: 6, within: 10m, for: 1h}',
      '    challenge: {after: 3}',
    ]).rules[0];
    expect(rule?.warnAt).toBe(0.8);
    expect(rule?.challenge).toEqual({ after: 3, difficulty: 16, passRequests: 10, passMs: 60_000 });
    const tuned = parse([
      '    ban: {after: 6, within: 10m, for: 1h}',
      '    challenge: {after: 2, difficulty: 12, pass: 3, for: 30s}',
    ]).rules[0];
    expect(tuned?.challenge).toEqual({ after: 2, difficulty: 12, passRequests: 3, passMs: 30_000 });
  });

  it('refuse a challenge without a ban, or one that would come after the ban', () => {
    expect(problemsOf(['    challenge: {after: 3}'])).toEqual([
      'rules.yaml:7:16 rules[0].challenge: challenge counts violations as ban does: add ban: {after, within, for}',
    ]);
    expect(problemsOf(['    ban: {after: 3, within: 1m, for: 1h}', '    challenge: {after: 3}'])).toEqual([
      'rules.yaml:8:24 rules[0].challenge.after: 3 is not below ban.after (3): the challenge comes before the ban',
    ]);
  });

  it('refuse a warning share that is not a percentage', () => {
    expect(problemsOf(['    warn_at: 0.8'])[0]).toBe(
      'rules.yaml:7:14 rules[0].warn_at: `warn_at` must be a percentage above 0% and at most 100% (say 10%), got 0.8',
    );
  });
});

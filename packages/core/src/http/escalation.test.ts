import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { issueChallenge, solveChallenge } from '../escalation/index.js';
import type { RequestFacts } from '../request/facts.js';
import { compileRules } from '../rules/index.js';
import { ALL_RULES, type CheckScope, createHttpLimiter, type Verdict } from './flow.js';

const CHALLENGED = {
  domain: 'test',
  rules: [
    {
      name: 'api',
      key: ['ip'],
      limit: { requests: 2, per: '1m' },
      ban: { after: 4, within: '10m', for: '1h' },
      challenge: { after: 2 },
    },
  ],
};
const quiet = { warn: () => {} };

describe('the challenge option', () => {
  it('is required, with its secret, by a rule with challenge: a clear error at start', () => {
    expect(() => createHttpLimiter({ rules: CHALLENGED, logger: quiet })).toThrow(
      'rule api has challenge, which needs a secret to sign its challenges: give the option challenge: {secret}',
    );
    expect(() =>
      createHttpLimiter({ rules: CHALLENGED, logger: quiet, challenge: { secret: 'short' } }),
    ).toThrow(ConfigError);
  });

  it('refuses an unknown name with a did-you-mean', () => {
    const options = { rules: CHALLENGED, logger: quiet, challenge: { secrets: 'x'.repeat(32) } };
    expect(() => createHttpLimiter(options as never)).toThrow(
      'challenge: unknown option "secrets" (did you mean "secret"?)',
    );
  });

  it('is refused for a route rule with challenge when the limiter has no secret', () => {
    const http = createHttpLimiter({ limit: 5, per: '1m', logger: quiet });
    expect(() => http.compileRouteRules(CHALLENGED.rules, 'GET /x')).toThrow('needs a secret');
    // Rules without challenge need none.
    expect(
      compileRules({ rules: [{ name: 'plain', key: ['ip'], limit: { requests: 1, per: '1s' } }] }),
    ).toBeTruthy();
  });
});

describe('a solution that names no challenge rule of the check', () => {
  const SECRET = 'a-challenge-secret-for-tests';
  const ROUTE = [
    {
      name: 'per_route',
      key: ['ip'],
      limit: { requests: 1, per: '1m' },
      ban: { after: 4, within: '10m', for: '1h' },
      challenge: { after: 1, difficulty: 4 },
    },
  ];
  const factsWith = (headers: Record<string, string> = {}): RequestFacts => ({
    ip: '203.0.113.7',
    method: 'get',
    url: '/x',
    header: (name) => headers[name],
  });

  it("is left by a global check to the route's check that redeems it; one signed for no rule is refused", () => {
    // A route the global middleware could not find: it checks the global rules alone, then the route's.
    const generous = { ...CHALLENGED.rules[0]!, limit: { requests: 100, per: '1m' } };
    const rules = { domain: 'test', rules: [generous] };
    const http = createHttpLimiter({ rules, logger: quiet, challenge: { secret: SECRET } });
    const route: CheckScope = { rules: http.compileRouteRules(ROUTE, 'GET /x'), global: false };
    const both = (facts: RequestFacts) => [http.check({}, facts, ALL_RULES), http.check({}, facts, route)];
    both(factsWith());
    const [, challenged] = both(factsWith()) as Verdict[];
    if (challenged?.action !== 'deny') throw new Error('expected the challenge');
    const { token, difficulty } = challenged.denied.body.challenge!;
    const solution = { 'sluice-solution': solveChallenge({ token, difficulty }) };
    const [global, redeemed] = both(factsWith(solution)) as Verdict[];
    expect(global?.action).toBe('allow');
    expect(redeemed?.action === 'allow' && redeemed.headers['Sluice-Pass']).toBeTruthy();
    // Signed with the secret, for a rule this limiter does not have (reloaded away, say): refused.
    const gone = issueChallenge(SECRET, 'gone', 'hash', 4, Date.now(), 60_000);
    const stray = http.check({}, factsWith({ 'sluice-solution': solveChallenge(gone) }), ALL_RULES);
    expect(stray).toMatchObject({ denied: { status: 403, body: { rule: null, refused: 'wrong_rule' } } });
  });
});

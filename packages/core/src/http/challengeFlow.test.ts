import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { compileRules } from '../rules/index.js';
import { createHttpLimiter } from './flow.js';

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

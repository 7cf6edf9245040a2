import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { afterBodyOf, splitAfterBody } from './afterBody.js';

describe('afterBody', () => {
  it('splits it off a route config, leaving what compiles to rules', () => {
    expect(splitAfterBody({ limit: 5, per: '1m', afterBody: true }, 'r')).toEqual({
      config: { limit: 5, per: '1m' },
      afterBody: true,
    });
    const plain = { rules: [] };
    expect(splitAfterBody(plain, 'r')).toEqual({ config: plain, afterBody: false });
  });

  it('refuses a misspelled option with a did-you-mean, and a value that is not a boolean', () => {
    expect(() => afterBodyOf({ afterbody: true } as never, 'limiter.route() options')).toThrow(
      /limiter\.route\(\) options: unknown option "afterbody" \(did you mean "afterBody"\?\)/,
    );
    expect(() => splitAfterBody({ limit: 5, per: '1m', afterBody: 'yes' }, 'route GET /x')).toThrow(
      ConfigError,
    );
    expect(afterBodyOf(undefined, 'x')).toBe(false);
  });
});

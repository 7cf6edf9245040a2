import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { inlineRules, parseInlineLimit } from './inline.js';
import { resolveOptions } from './options.js';

describe('the shorthand', () => {
  it('takes a counting algorithm and gives it to each of its rules', () => {
    const inline = parseInlineLimit(
      { limit: 5, per: '15m', key: 'api_key', algorithm: 'first_request_window' },
      'x',
    );
    expect(inlineRules(inline, 'r').map((rule) => rule.algorithm)).toEqual([
      'first_request_window',
      'first_request_window',
    ]);
    expect(inlineRules(parseInlineLimit({ limit: 5, per: '1m' }, 'x'), 'r')[0]).not.toHaveProperty(
      'algorithm',
    );
  });

  it('refuses concurrency (its limit is not a rate) and an unknown name', () => {
    expect(() => parseInlineLimit({ limit: 5, per: '1m', algorithm: 'concurrency' }, 'GET /')).toThrow(
      /GET \/: the shorthand .*algorithm/,
    );
    expect(() => parseInlineLimit({ limit: 5, per: '1m', algorithm: 'fixed' }, 'GET /')).toThrow(ConfigError);
  });

  it('says what limit and per take in plain words, on a route and as adapter options alike', () => {
    const whole = 'must be a whole number of at least 1';
    const duration = 'must be a duration such as "1s", "60s", "1m", "1h" or "1d"';
    expect(() => parseInlineLimit({ limit: 0, per: '1m' }, 'GET /')).toThrow(
      `GET /: the shorthand {limit, per, key?, algorithm?, name?}: limit: ${whole}`,
    );
    expect(() => parseInlineLimit({ limit: 5 }, 'GET /')).toThrow(`per: ${duration}`);
    expect(() => parseInlineLimit({ limit: 5, per: 60 }, 'GET /')).toThrow(`per: ${duration}`);
    expect(() => resolveOptions({ limit: 0, per: '1m' })).toThrow(
      `invalid rate limit options: option "limit": ${whole}`,
    );
    expect(() => resolveOptions({ limit: 2.5, per: '1m' })).toThrow(`option "limit": ${whole}`);
    expect(() => resolveOptions({ limit: 5, per: 60 as never })).toThrow(`option "per": ${duration}`);
  });

  it('takes algorithm as an adapter option beside limit and per, never alone', () => {
    expect(resolveOptions({ limit: 5, per: '1m', algorithm: 'fixed_window' }).algorithm).toBe('fixed_window');
    expect(() => resolveOptions({ algorithm: 'fixed_window' })).toThrow(
      /option "algorithm": goes with the shorthand/,
    );
  });
});

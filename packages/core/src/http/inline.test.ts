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

  it('takes algorithm as an adapter option beside limit and per, never alone', () => {
    expect(resolveOptions({ limit: 5, per: '1m', algorithm: 'fixed_window' }).algorithm).toBe('fixed_window');
    expect(() => resolveOptions({ algorithm: 'fixed_window' })).toThrow(
      /option "algorithm": goes with the shorthand/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { resolveOptions } from './options.js';

describe('resolveOptions', () => {
  it('fills in the documented defaults', () => {
    const options = resolveOptions(undefined);
    expect(options).toMatchObject({
      headers: 'draft',
      apiKeyHeader: 'x-api-key',
      ipv6Subnet: 64,
      caseSensitiveRoutes: false,
      maxValueLength: 256,
    });
  });

  it('names a wrong option', () => {
    expect(() => resolveOptions({ headers: 'fancy' } as never)).toThrow(ConfigError);
    expect(() => resolveOptions({ headers: 'fancy' } as never)).toThrow(/option "headers"/);
    expect(() => resolveOptions({ ipv6Subnet: 129 })).toThrow(/option "ipv6Subnet"/);
    expect(() => resolveOptions({ ipv6Subnet: 48 })).not.toThrow();
    expect(() => resolveOptions({ skip: true } as never)).toThrow(/option "skip": must be a function/);
    expect(() => resolveOptions({ store: {} } as never)).toThrow(/option "store": must be a Store/);
  });

  it('rejects an unknown option, so a typo is not silently ignored', () => {
    expect(() => resolveOptions({ rule: 'x' } as never)).toThrow(/unknown option "rule"/);
  });

  it("gives a did-you-mean for a typo, and our name for another library's option", () => {
    expect(() => resolveOptions({ timeoutMS: 5 } as never)).toThrow(
      /unknown option "timeoutMS" \(did you mean "timeoutMs"\?\)/,
    );
    expect(() => resolveOptions({ keyGenerator: () => 'x' } as never)).toThrow(
      /\(did you mean "descriptors"\?\)/,
    );
    expect(() => resolveOptions({ zzz: 1 } as never)).toThrow(/unknown option "zzz"$/);
  });

  it('takes the shorthand whole, never beside rules', () => {
    expect(resolveOptions({ limit: 10, per: '1m', key: 'api_key' })).toMatchObject({ limit: 10, per: '1m' });
    expect(() => resolveOptions({ limit: 10 })).toThrow(/option "per"/);
    expect(() => resolveOptions({ key: 'ip' })).toThrow(/option "key": goes with the shorthand/);
    expect(() => resolveOptions({ limit: 1.5, per: '1m' })).toThrow(/option "limit"/);
    expect(() => resolveOptions({ limit: 10, per: '1m', rules: { rules: [] } })).toThrow(/not both/);
  });

  it('lists every wrong option at once', () => {
    expect(() => resolveOptions({ headers: 1, timeoutMs: -1 } as never)).toThrow(/"headers".*"timeoutMs"/);
  });
});

describe('decisionLog', () => {
  it('needs a logger with info()', () => {
    expect(() => resolveOptions({ decisionLog: true, logger: { warn: () => {} } })).toThrow(
      /logger.*decision logs need a logger with an info\(object\) method/,
    );
    expect(() => resolveOptions({ decisionLog: { denied: 2 } })).toThrow(/decisionLog/);
    expect(() =>
      resolveOptions({ decisionLog: { denied: 0.5 }, logger: { warn: () => {}, info: () => {} } }),
    ).not.toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
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
    expect(() => resolveOptions({ skip: true } as never)).toThrow(/option "skip": must be a function/);
    expect(() => resolveOptions({ store: {} } as never)).toThrow(/option "store": must be a Store/);
  });

  it('rejects an unknown option, so a typo is not silently ignored', () => {
    expect(() => resolveOptions({ rule: 'x' } as never)).toThrow(/unknown option "rule"/);
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

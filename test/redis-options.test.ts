/** RedisStore refuses an options object with a name it does not read, with a did-you-mean, before using the client. */
import { ConfigError } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

describe('RedisStore options', () => {
  // Never connects: the names are checked before anything else.
  const client = new Redis({ lazyConnect: true });
  afterAll(() => client.disconnect());

  it('refuses a misspelled option with a did-you-mean', () => {
    const build = () => new RedisStore({ client, timeoutMS: 50 } as never);
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(/unknown option "timeoutMS" \(did you mean "timeoutMs"\?\)/);
  });

  it('names every unknown option at once, the owner first', () => {
    try {
      new RedisStore({ client, prefx: 'a', maxpending: 3 } as never);
      expect.unreachable('the options were accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).code).toBe('ERR_SLUICE_CONFIG');
      expect((error as Error).message).toMatch(/^RedisStore: /);
      expect((error as Error).message).toContain('"prefx" (did you mean "prefix"?)');
      expect((error as Error).message).toContain('"maxpending" (did you mean "maxPending"?)');
    }
  });

  it('accepts every documented option', async () => {
    const store = new RedisStore({
      client,
      prefix: 'opt',
      clock: 'app',
      timeoutMs: 50,
      breaker: false,
      maxPending: 10,
      coalesce: true,
      logger: { warn() {} },
    });
    await store.close();
  });
});

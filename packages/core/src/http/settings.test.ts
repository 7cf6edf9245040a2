import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import type { RateLimitOptions } from './options.js';
import { resolveSettings } from './settings.js';

/** Options as a user might write them, typos included (the type checker would refuse those). */
const given = (options: object) => options as RateLimitOptions<unknown>;

describe('the options resolved once, at construction (settings.ts)', () => {
  const observer = { onDecision: () => {} };
  const settings = resolveSettings(
    given({
      limit: 5,
      per: '1m',
      observer,
      skip: () => false,
      apiKeyHeader: 'X-Key',
      challenge: { secret: 'a'.repeat(16) },
    }),
  );

  it('is frozen whole and in each part', () => {
    for (const part of [settings, settings.options, settings.limiter, settings.descriptors, settings.notices])
      expect(Object.isFrozen(part)).toBe(true);
  });

  it('hands each layer below its own part, not the bag', () => {
    expect(settings.limiter).not.toBe(settings.options);
    expect(Object.keys(settings.limiter).sort()).toEqual(['limit', 'logger', 'observer', 'per']);
    expect(settings.limiter.observer).toBe(observer);
    expect(settings.descriptors).toMatchObject({ apiKeyHeader: 'x-key', ipv6Subnet: 64 });
    expect(settings.descriptors).not.toHaveProperty('skip');
    expect(settings.challenge).toEqual({ secret: 'a'.repeat(16), ttlMs: 60_000, page: true });
  });

  it('refuses a wrong name anywhere in the tree in the same resolve, with a did-you-mean', () => {
    const wrong = (options: object) => () => resolveSettings(given(options));
    expect(wrong({ timeoutMS: 5 })).toThrow(ConfigError);
    expect(wrong({ timeoutMS: 5 })).toThrow(/did you mean "timeoutMs"/);
    expect(wrong({ challenge: { secret: 'a'.repeat(16), ttlMS: 5000 } })).toThrow(
      /challenge: unknown option "ttlMS" \(did you mean "ttlMs"\?\)/,
    );
    expect(wrong({ regions: { regoin: 'eu' } })).toThrow(
      /regions: unknown option "regoin" \(did you mean "region"/,
    );
    expect(wrong({ watch: { publsh: true } })).toThrow(/unknown option "publsh" \(did you mean "publish"/);
    expect(wrong({ decisionLog: { denid: 1 } })).toThrow(
      /option "decisionLog": unknown option "denid" \(did you mean "denied"\?\)/,
    );
  });

  it('names every wrong option of the tree in one error, not the first one found', () => {
    const wrong = {
      timeoutMS: 5,
      challenge: { secret: 'a'.repeat(16), ttlMS: 5000 },
      regions: { regoin: 'eu' },
      watch: { publsh: true },
    };
    let message = '';
    try {
      resolveSettings(given(wrong));
    } catch (error) {
      message = (error as ConfigError).message;
    }
    for (const name of ['timeoutMS', 'ttlMS', 'regoin', 'publsh']) expect(message).toContain(`"${name}"`);
  });

  it('refuses a challenge that is not an object, as before the one-pass check', () => {
    expect(() => resolveSettings(given({ challenge: 'secret' } as never))).toThrow(/challenge must be/);
  });
});

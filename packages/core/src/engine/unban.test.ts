import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { compileRules } from '../rules/compile.js';
import type { Descriptors } from '../rules/contract.js';
import { createLimiter } from './engine.js';

const RULES = compileRules({
  rules: [
    {
      name: 'login',
      key: ['ip'],
      algorithm: 'fixed_window',
      limit: { requests: 1, per: '1m' },
      ban: { after: 1, within: '1m', for: '10m' },
    },
    { name: 'plain', key: ['ip'], limit: { requests: 5, per: '1m' } },
  ],
});

const IP: Descriptors = { ip: '203.0.113.9' };

function setup() {
  let now = Date.UTC(2026, 10, 30, 12);
  const warnings: string[] = [];
  const events: unknown[][] = [];
  const limiter = createLimiter({
    rules: RULES,
    clock: () => now,
    logger: { warn: (message) => warnings.push(message) },
    observer: {
      onBan: (rule, until) => events.push(['ban', rule, until]),
      onUnban: (rule, lifted) => events.push(['unban', rule, lifted]),
    },
  });
  return { limiter, warnings, events, advance: (ms: number) => (now += ms), now: () => now };
}

describe('a ban in the decision and the observer', () => {
  it('says reason ban, the rule and when it ends; onBan fires once, when it starts', async () => {
    const { limiter, events, now } = setup();
    expect((await limiter.check(IP)).allowed).toBe(true);
    const banned = await limiter.check(IP);
    expect(banned).toMatchObject({
      allowed: false,
      reason: 'ban',
      rule: 'login',
      retryAfterMs: 600_000,
      bannedUntil: now() + 600_000,
    });
    expect(banned.results.find((r) => r.rule === 'login')).toMatchObject({ banStarted: true });
    const again = await limiter.check(IP);
    expect(again.results.find((r) => r.rule === 'login')).toMatchObject({ banStarted: false });
    expect(events).toEqual([['ban', 'login', now() + 600_000]]);
  });
});

describe('a shadow ban', () => {
  it('shows in the rule result, lets the request through, and is no onBan event', async () => {
    const events: unknown[] = [];
    const rules = compileRules({
      rules: [
        {
          name: 'watch',
          key: ['ip'],
          mode: 'shadow',
          limit: { requests: 1, per: '1m' },
          ban: { after: 1, within: '1m', for: '10m' },
        },
      ],
    });
    const limiter = createLimiter({
      rules,
      clock: () => 0,
      observer: { onBan: (rule) => events.push(rule) },
    });
    await limiter.check(IP);
    const decision = await limiter.check(IP);
    expect(decision).toMatchObject({ allowed: true, reason: 'allowed' });
    expect(decision.results[0]).toMatchObject({ shadowDenied: true, banStarted: true, bannedUntil: 600_000 });
    expect(events).toEqual([]);
  });
});

describe('limiter.unban', () => {
  it('lifts the ban of the key the descriptors make, logs it with the hashed key and tells the observer', async () => {
    const { limiter, warnings, events, advance } = setup();
    await limiter.check(IP);
    await limiter.check(IP);
    advance(60_000);
    expect((await limiter.check(IP)).reason).toBe('ban');
    expect(await limiter.unban('login', IP)).toBe(true);
    expect((await limiter.check(IP)).allowed).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^SLUICE_BAN_LIFTED: ban of rule login lifted for key [\w-]{22}$/);
    expect(warnings[0]).not.toContain('203.0.113.9');
    expect(events.at(-1)).toEqual(['unban', 'login', true]);
    // Another key's ban, or none: nothing to lift, still logged.
    expect(await limiter.unban('login', { ip: '198.51.100.1' })).toBe(false);
    expect(warnings[1]).toMatch(/\(it had none\)$/);
  });

  it('refuses an unknown rule, a rule without ban and missing key descriptors', async () => {
    const { limiter } = setup();
    await expect(limiter.unban('nope', IP)).rejects.toThrow(new ConfigError('unban: no rule named "nope"'));
    await expect(limiter.unban('plain', IP)).rejects.toThrow('unban: rule plain has no ban');
    await expect(limiter.unban('login', {})).rejects.toThrow(
      'unban: rule login is keyed on ip: give its value',
    );
  });
});

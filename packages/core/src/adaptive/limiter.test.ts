import { describe, expect, it } from 'vitest';
import { ConfigError } from '../base/errors.js';
import { createLimiter } from '../engine/engine.js';
import type { Observer } from '../observe/contract.js';
import { compileRules } from '../rules/compile.js';
import type { RuleSpec } from '../rules/schema.js';

const ADAPTIVE = { error_rate: '10%', min_samples: 10, interval: '1s' } as const;

function limiterWith(rules: RuleSpec[], observer: Observer = {}) {
  let now = 1_000_000;
  const limiter = createLimiter({
    rules: compileRules({ domain: 'api', rules }),
    clock: () => now,
    observer,
  });
  return {
    limiter,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** Sends `count` requests over one second and answers the allowed ones with `status`; returns those allowed. */
async function second(
  setup: ReturnType<typeof limiterWith>,
  count: number,
  status: (i: number) => number,
  descriptors = {},
): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < count; i++) {
    const decision = await setup.limiter.check(descriptors);
    if (decision.allowed) {
      allowed++;
      setup.limiter.observe(decision, status(i), 5);
    }
    setup.advance(1000 / count);
  }
  return allowed;
}

const payments: RuleSpec = {
  name: 'payments',
  global: true,
  algorithm: 'fixed_window',
  limit: { requests: 100, per: '1s' },
  adaptive: ADAPTIVE,
};

describe('a limiter with an adaptive rule', () => {
  it('lets fewer requests through while the backend fails 30%, and all again once it heals', async () => {
    const setup = limiterWith([payments]);
    const admitted: number[] = [];
    for (let s = 0; s < 5; s++) admitted.push(await second(setup, 100, (i) => (i % 10 < 3 ? 503 : 200)));
    expect(admitted[0]).toBe(100);
    expect(admitted.at(-1)).toBeLessThanOrEqual(25);
    expect(setup.limiter.factor('payments')).toBeLessThan(0.3);
    for (let s = 0; s < 12; s++) await second(setup, 100, () => 200);
    expect(setup.limiter.factor('payments')).toBe(1);
    expect(await second(setup, 100, () => 200)).toBe(100);
  });

  it('marks only decisions through adaptive rules for observation', async () => {
    const setup = limiterWith([payments, { name: 'plain', key: ['ip'], limit: { requests: 9, per: '1s' } }]);
    const both = await setup.limiter.check({ ip: '192.0.2.1' });
    expect(both.adaptive).toEqual(['payments']);
    const plain = limiterWith([{ name: 'plain', key: ['ip'], limit: { requests: 9, per: '1s' } }]);
    expect(await plain.limiter.check({ ip: '192.0.2.1' })).not.toHaveProperty('adaptive');
  });

  it('follows a circuit breaker: open sets the floor, half_open midway, closed climbs on from there', async () => {
    const factors: number[] = [];
    const setup = limiterWith([payments], { onAdaptiveFactor: (_rule, factor) => factors.push(factor) });
    setup.limiter.setBreaker('payments', 'open');
    expect((await setup.limiter.check({})).limit).toBe(10);
    setup.limiter.setBreaker('payments', 'half_open');
    expect(setup.limiter.factor('payments')).toBeCloseTo(0.55);
    setup.limiter.setBreaker('payments', 'closed');
    await second(setup, 50, () => 200);
    await second(setup, 50, () => 200);
    expect(setup.limiter.factor('payments')).toBeGreaterThan(0.55);
    expect(factors.slice(0, 2)).toEqual([0.1, 0.55]);
    expect(setup.limiter.health()).toMatchObject({ connected: true });
  });

  it('refuses a breaker for a rule that is not adaptive, or a state that is not one', () => {
    const { limiter } = limiterWith([payments]);
    expect(() => limiter.setBreaker('nope', 'open')).toThrow(ConfigError);
    expect(() => limiter.setBreaker('payments', 'ajar' as 'open')).toThrow(/not a breaker state/);
  });
});

describe('priority classes under pressure', () => {
  const tiered: RuleSpec = {
    ...payments,
    name: 'tiered',
    adaptive: { ...ADAPTIVE, shed_below: 0.5 },
    priority: { descriptor: 'tier', default: 'normal' },
  };

  it('sheds sheddable requests first and limits critical ones last', async () => {
    const sheds: string[] = [];
    const setup = limiterWith([tiered], { onShed: (rule, cls) => sheds.push(`${rule}:${cls}`) });
    setup.limiter.setBreaker('tiered', 'half_open');
    const limits = async (tier: string) => (await setup.limiter.check({ tier })).limit;
    // factor 0.55: sheddable 0.3025, normal 0.55, critical 0.74
    expect([await limits('sheddable'), await limits('normal'), await limits('critical')]).toEqual([
      30, 55, 74,
    ]);
    setup.limiter.setBreaker('tiered', 'open');
    const shed = await setup.limiter.check({ tier: 'sheddable' });
    expect(shed.allowed).toBe(false);
    expect(sheds).toEqual(['tiered:sheddable']);
    expect((await setup.limiter.check({ tier: 'critical' })).allowed).toBe(true);
  });

  it('keeps half of a concurrency rule for normal and critical requests', async () => {
    const setup = limiterWith([
      {
        name: 'workers',
        global: true,
        algorithm: 'concurrency',
        limit: { concurrent: 4 },
        priority: { descriptor: 'tier' },
      },
    ]);
    const take = async (tier: string) => (await setup.limiter.check({ tier })).allowed;
    expect([await take('sheddable'), await take('sheddable'), await take('sheddable')]).toEqual([
      true,
      true,
      false,
    ]);
    expect([await take('normal'), await take('critical'), await take('critical')]).toEqual([
      true,
      true,
      false,
    ]);
  });
});

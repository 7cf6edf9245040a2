/** The adaptive factor gauge and the shed counter, read from a real prom-client registry. */
import { compileRules, createLimiter } from '@sluice/core';
import { prometheusObserver } from '@sluice/prometheus';
import { describe, expect, it } from 'vitest';

describe('adaptive metrics', () => {
  it('show the factor per rule and sheds by class', async () => {
    const metrics = prometheusObserver();
    const limiter = createLimiter({
      rules: compileRules({
        rules: [
          {
            name: 'payments',
            global: true,
            limit: { requests: 100, per: '1s' },
            adaptive: { error_rate: '10%' },
            priority: { descriptor: 'tier' },
          },
        ],
      }),
      observer: metrics,
    });
    limiter.setBreaker('payments', 'open');
    expect((await limiter.check({ tier: 'sheddable' })).allowed).toBe(false);
    expect((await limiter.check({ tier: 'critical' })).allowed).toBe(true);
    const text = await metrics.metrics();
    expect(text).toContain('sluice_adaptive_factor{rule="payments"} 0.1');
    expect(text).toContain('sluice_shed_total{rule="payments",priority="sheddable"} 1');
    expect(text).not.toContain('priority="critical"');
  });
});

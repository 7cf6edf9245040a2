/**
 * Adaptive limits and priority shedding through each adapter, over real HTTP: the adapters report each
 * response of a request through an adaptive rule, the factor follows the backend's health, and a breaker and
 * priority classes decide who is shed. A fake clock drives time, so nothing here depends on the machine's speed.
 */
import type { RuleSpec } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type Backend, type Framework, type StartedApp, startApp } from './adaptive-apps.js';

const payments: RuleSpec = {
  name: 'payments',
  global: true,
  algorithm: 'fixed_window',
  limit: { requests: 40, per: '1s' },
  adaptive: { error_rate: '10%', min_samples: 5, interval: '1s' },
  priority: { descriptor: 'tier', default: 'normal' },
};

let app: StartedApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** `count` requests spread over one second of the fake clock; the statuses the client got. */
async function second(url: string, clock: { now: number }, count: number, tier?: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}/pay`, tier === undefined ? {} : { headers: { 'x-tier': tier } });
    await response.arrayBuffer();
    statuses.push(response.status);
    clock.now += 1000 / count;
  }
  return statuses;
}

describe.each<Framework>(['express', 'koa', 'fastify'])('%s', (framework) => {
  it('observes each response: 5xx lower the factor, healthy responses raise it again', async () => {
    const clock = { now: 1_000_000 };
    const backend: Backend = { status: () => 503, served: 0 };
    app = await startApp(framework, { rules: [payments], backend, clock: () => clock.now });
    await second(app.url, clock, 20);
    await second(app.url, clock, 20);
    expect(app.limiter.factor('payments')).toBeLessThan(1);
    backend.status = () => 200;
    for (let s = 0; s < 12; s++) await second(app.url, clock, 20);
    expect(app.limiter.factor('payments')).toBe(1);
  });

  it('observes each response latency: a slow p99 lowers the factor', async () => {
    const clock = { now: 3_000_000 };
    // Each response takes 900 ms of the fake clock: over the 800 ms the rule allows its p99.
    const backend: Backend = {
      status: () => 200,
      served: 0,
      work: () => {
        clock.now += 900;
      },
    };
    const slow: RuleSpec = {
      ...payments,
      adaptive: { latency: { percentile: 99, max: '800ms' }, min_samples: 5, interval: '1s' },
    };
    app = await startApp(framework, { rules: [slow], backend, clock: () => clock.now });
    await second(app.url, clock, 10);
    expect(app.limiter.factor('payments')).toBeLessThan(1);
  });

  it('sheds sheddable requests and keeps critical ones while a breaker is open', async () => {
    const clock = { now: 2_000_000 };
    const backend: Backend = { status: () => 200, served: 0 };
    app = await startApp(framework, { rules: [payments], backend, clock: () => clock.now });
    app.limiter.setBreaker('payments', 'open');
    const shed = await fetch(`${app.url}/pay`, { headers: { 'x-tier': 'sheddable' } });
    expect(shed.status).toBe(429);
    expect(shed.headers.get('x-ratelimit-rule')).toBe('payments');
    // critical gets √0.1 of 40: 12 a second; normal 4.
    expect((await second(app.url, clock, 20, 'critical')).filter((s) => s === 200)).toHaveLength(12);
    expect((await second(app.url, clock, 20, 'normal')).filter((s) => s === 200)).toHaveLength(4);
  });
});

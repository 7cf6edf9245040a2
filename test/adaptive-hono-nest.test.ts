/**
 * Adaptive limits and priority shedding on Hono and on NestJS (Express and Fastify underneath), over real HTTP on
 * the contract apps, as test/adaptive-http.test.ts does for Express, Koa and Fastify: the adapters report each
 * response of a request through an adaptive rule (`/boom` throws, and the framework's error handling answers 500),
 * the factor follows the backend's health, and priority classes decide who is shed. A fake clock drives time.
 */
import type { RuleSpec } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterFactory, AnyRequest, RunningApp } from './adapters/app-spec.js';
import { hono } from './adapters/hono-app.js';
import { nestAdapters } from './adapters/nest-app.js';

const backend: RuleSpec = {
  name: 'backend',
  global: true,
  algorithm: 'fixed_window',
  limit: { requests: 40, per: '1s' },
  adaptive: { error_rate: '10%', min_samples: 5, interval: '1s' },
  priority: { descriptor: 'tier', default: 'normal' },
};

/** The request's class from a header, as an app's descriptors hook would set it from what it trusts. */
const tierOf = (req: AnyRequest): Record<string, string> => {
  const tier = req.headers['x-tier'];
  return typeof tier === 'string' ? { tier } : {};
};

let app: RunningApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** `count` requests to `path` spread over one second of the fake clock; the statuses the client got. */
async function second(path: string, clock: { now: number }, count: number, tier?: string) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(
      `${app?.url}${path}`,
      tier === undefined ? {} : { headers: { 'x-tier': tier } },
    );
    await response.arrayBuffer();
    statuses.push(response.status);
    clock.now += 1000 / count;
  }
  return statuses;
}

async function start(adapter: AdapterFactory, clock: { now: number }): Promise<RunningApp> {
  app = await adapter.start({
    options: {
      rules: { rules: [backend] },
      clock: () => clock.now,
      descriptors: tierOf,
      logger: { warn: () => {} },
    },
    errors: [],
  });
  return app;
}

describe.each<AdapterFactory>([hono, ...nestAdapters])('$name', (adapter) => {
  it('observes each response: a failing backend (500) lowers the factor, a healthy one raises it to 1', async () => {
    const clock = { now: 1_000_000 };
    const running = await start(adapter, clock);
    const failing = await second('/boom', clock, 20);
    expect(failing.every((status) => status === 500)).toBe(true);
    await second('/boom', clock, 20);
    expect(running.limiter.factor('backend')).toBeLessThan(1);
    for (let s = 0; s < 12; s++) await second('/search', clock, 20);
    expect(running.limiter.factor('backend')).toBe(1);
  });

  it('sheds sheddable requests and keeps critical ones while a breaker is open', async () => {
    const clock = { now: 2_000_000 };
    const running = await start(adapter, clock);
    running.limiter.setBreaker('backend', 'open');
    const shed = await fetch(`${running.url}/search`, { headers: { 'x-tier': 'sheddable' } });
    expect(shed.status).toBe(429);
    expect(shed.headers.get('x-ratelimit-rule')).toBe('backend');
    // critical gets √0.1 of 40: 12 a second; normal 4.
    expect((await second('/search', clock, 20, 'critical')).filter((s) => s === 200)).toHaveLength(12);
    expect((await second('/search', clock, 20, 'normal')).filter((s) => s === 200)).toHaveLength(4);
  });
});

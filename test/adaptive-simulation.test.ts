/**
 * The simulation of issue 13: a backend that starts failing 30% of its requests gets its load reduced within
 * seconds, and gets it back after it heals. Real HTTP through Express, a fake clock (one simulated second is 60
 * requests), on a MemoryStore and on two gateways sharing their factor through one redis-server.
 */
import type { RuleSpec } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { type Backend, type StartedApp, startApp } from './adaptive-apps.js';
import { randomPrefix, ready, redisSuite } from './support/redis.js';

const redis = redisSuite();

const PER_SECOND = 60;

const backendRule: RuleSpec = {
  name: 'backend',
  global: true,
  algorithm: 'fixed_window',
  limit: { requests: PER_SECOND, per: '1s' },
  adaptive: { error_rate: '10%', min_samples: 10, interval: '1s' },
};

/** A backend failing 30% of what it serves while `failing`. */
function flakyBackend(): Backend & { failing: boolean } {
  const backend = {
    failing: false,
    served: 0,
    status: () => (backend.failing && backend.served % 10 < 3 ? 503 : 200),
  };
  return backend;
}

/** Runs `seconds` simulated seconds of PER_SECOND requests spread over the gateways; the backend's load each second. */
async function run(
  gateways: readonly StartedApp[],
  backend: Backend,
  clock: { now: number },
  seconds: number,
): Promise<number[]> {
  const loads: number[] = [];
  // Whole milliseconds from a second's start: each simulated second is one fixed window.
  const start = Math.ceil(clock.now / 1000) * 1000;
  for (let s = 0; s < seconds; s++) {
    const before = backend.served;
    for (let i = 0; i < PER_SECOND; i++) {
      clock.now = start + s * 1000 + Math.floor((i * 1000) / PER_SECOND);
      const gateway = gateways[i % gateways.length] as StartedApp;
      const response = await fetch(`${gateway.url}/pay`);
      await response.arrayBuffer();
    }
    loads.push(backend.served - before);
  }
  clock.now = start + seconds * 1000;
  return loads;
}

/** The whole story: healthy, failing 30% for 8 s, healed for 12 s. */
async function simulate(stores: readonly (Store | undefined)[]): Promise<void> {
  const clock = { now: 50_000_000 };
  const backend = flakyBackend();
  const gateways: StartedApp[] = [];
  try {
    for (const store of stores)
      gateways.push(
        await startApp('express', {
          rules: [backendRule],
          backend,
          clock: () => clock.now,
          ...(store === undefined ? {} : { store }),
        }),
      );
    const healthy = await run(gateways, backend, clock, 2);
    expect(healthy).toEqual([PER_SECOND, PER_SECOND]);
    backend.failing = true;
    const failing = await run(gateways, backend, clock, 8);
    // Within 3 s the backend gets at most half its load; by the end, about the floor (10%, rounded down).
    expect(failing[2], `load while failing: ${failing}`).toBeLessThanOrEqual(PER_SECOND / 2);
    expect(failing.at(-1), `load while failing: ${failing}`).toBeLessThanOrEqual(PER_SECOND * 0.15);
    backend.failing = false;
    const healed = await run(gateways, backend, clock, 12);
    // AIMD climbs 0.1 a second from the floor: full load again within 10 s.
    expect(healed.at(-1), `load after healing: ${healed}`).toBe(PER_SECOND);
    expect(healed[0], `load after healing: ${healed}`).toBeLessThan(PER_SECOND);
    for (const gateway of gateways) expect(gateway.limiter.factor('backend')).toBe(1);
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.close()));
  }
}

describe('a backend failing 30% of requests', () => {
  it('on one gateway (MemoryStore): load reduced within seconds, restored after it heals', async () => {
    await simulate([undefined]);
  });

  it('on two gateways sharing the factor through one redis-server', async () => {
    const prefix = randomPrefix();
    const clients = [0, 1].map(() => new Redis({ host: redis.server.host, port: redis.server.port }));
    await Promise.all(clients.map(ready));
    try {
      await simulate(
        clients.map((client) => new RedisStore({ client, prefix, timeoutMs: 5000, breaker: false })),
      );
    } finally {
      for (const client of clients) client.disconnect();
    }
  });
});

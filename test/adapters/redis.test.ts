import { request as httpRequest } from 'node:http';
import { RedisStore } from '@sluice/redis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomPrefix, redisSuite, scanKeys } from '../support/redis.js';
import { type AppSpec, adapters, Gate, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

// Each contract app with its counters in a real redis-server: the same answers as in memory, leases held in
// Redis given back when the client leaves (route-one-call.test.ts counts the script calls).

const redis = redisSuite();

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  '%s on a real RedisStore',
  (_name, adapter) => {
    let running: RunningApp | undefined;
    let prefix = randomPrefix();

    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    async function start(spec: Partial<AppSpec> & { options: AppSpec['options'] }): Promise<RunningApp> {
      prefix = randomPrefix();
      const store = new RedisStore({ client: redis.client, prefix });
      running = await adapter.start({
        ...spec,
        // A generous store timeout: a loaded machine must not turn a slow first script call into a fail-open.
        options: { clock: () => T0, logger: { warn: () => {} }, store, timeoutMs: 15_000, ...spec.options },
      });
      return running;
    }

    /** Leases in the prefix's sorted sets (a concurrency rule keeps its leases in one). */
    async function leasesHeld(keyPrefix: string): Promise<number> {
      let held = 0;
      for (const key of await scanKeys(redis.admin, keyPrefix))
        if ((await redis.admin.type(key)) === 'zset') held += await redis.admin.zcard(key);
      return held;
    }

    it('allows, then denies from Redis with the same status, headers and body as in memory', async () => {
      const app = await start({ options: { rules: rules(perIp(2, { algorithm: 'sliding_log' })) } });
      const first = await fetch(`${app.url}/search`);
      expect(first.headers.get('ratelimit')).toBe('"per_ip";r=1;t=60');
      await fetch(`${app.url}/search`);
      const denied = await fetch(`${app.url}/search`);
      expect(denied.status).toBe(429);
      expect(denied.headers.get('retry-after')).toBe('60');
      expect(denied.headers.get('x-ratelimit-rule')).toBe('per_ip');
      expect(denied.headers.get('cache-control')).toBe('no-store');
      expect(await denied.json()).toEqual({ error: 'rate_limited', rule: 'per_ip', retryAfter: 60 });
      // Counted in Redis, under hashed tags: the client's address is nowhere in the keys.
      const keys = await scanKeys(redis.admin, prefix);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.join(' ')).not.toContain('127.0.0.1');
    });

    it('gives a concurrency lease held in Redis back when the client aborts', async () => {
      const gate = new Gate();
      const oneAtATime = rules({
        name: 'one_at_a_time',
        match: { route: '/slow' },
        key: [],
        global: true,
        algorithm: 'concurrency',
        limit: { concurrent: 1 },
      });
      const app = await start({ gate, options: { rules: oneAtATime } });
      const req = httpRequest(`${app.url}/slow`);
      const gone = new Promise((resolve) => req.on('close', resolve));
      req.on('error', () => {});
      req.end();
      await vi.waitFor(() => expect(gate.entered).toBe(1), { timeout: 10_000 });
      expect(await leasesHeld(prefix)).toBe(1);
      req.destroy();
      await gone;
      await vi.waitFor(async () => expect(await leasesHeld(prefix)).toBe(0), { timeout: 10_000 });
      const next = fetch(`${app.url}/slow`).then((response) => response.status);
      await vi.waitFor(() => expect(gate.entered).toBe(2), { timeout: 10_000 });
      gate.openAll();
      expect(await next).toBe(200);
    });
  },
);

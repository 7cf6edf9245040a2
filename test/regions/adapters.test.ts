/**
 * Every adapter (Fastify, Express, Koa, Hono, NestJS on Express and on Fastify) with a regional and a global
 * rule, its limiter given `regions`: the global rule draws on the one global budget. The adapter's app serves
 * region eu; a limiter of region us on the same global store gets what eu was not granted, and no more;
 * eu then spends its grant and is refused by the global rule, whose headers show the global limit.
 */
import { compileRules, createLimiter, type Limiter } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { adapters, type RunningApp } from '../adapters/apps.js';
import { randomPrefix, redisSuite } from '../support/redis.js';
import { GLOBAL_RULE, searchRules } from './apps.js';
import { GLOBAL_TIMEOUT_MS, Notices } from './fleet.js';

const LIMIT = 20;
/** An hour's window: a test never sees one end. */
const RULES = searchRules(LIMIT, '1h');

const redis = redisSuite();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The region's grant of the global rule as its limiter last read it (undefined before its first sync). */
function grantOf(limiter: Limiter): number | undefined {
  return limiter.explain({ route: '/search' }).rules.find((r) => r.rule === GLOBAL_RULE)?.budget?.grant;
}

/** Runs `step` (by default, waits 20 ms) until `done`. */
async function until(
  what: string,
  done: () => boolean,
  step: () => Promise<unknown> = () => sleep(20),
): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await step();
  }
}

describe.each(adapters.map((adapter) => [adapter.name, adapter] as const))(
  '%s with regions',
  (_name, adapter) => {
    const closing: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close();
    });

    function stores() {
      const notices = new Notices();
      const global = new RedisStore({
        client: redis.client,
        prefix: randomPrefix('g'),
        timeoutMs: GLOBAL_TIMEOUT_MS,
        maxTimeoutMs: GLOBAL_TIMEOUT_MS,
        logger: notices,
      });
      const regional = () =>
        new RedisStore({ client: redis.client, prefix: randomPrefix('r'), logger: notices });
      return { global, regional, notices };
    }

    it('counts its global rule against the one global budget another region draws on', async () => {
      const { global, regional, notices } = stores();
      const app: RunningApp = await adapter.start({
        options: {
          rules: RULES,
          store: regional(),
          regions: { region: 'eu', global },
          logger: notices,
          timeoutMs: 15_000,
        },
      });
      closing.push(() => app.close());
      const send = () => fetch(`${app.url}/search`, { headers: { 'x-api-key': 'eu-client' } });
      // Its first request on the optimistic first slice (1 unit), the next ones once slices came.
      let euAdmitted = 0;
      await until(
        '5 requests through eu',
        () => euAdmitted >= 5,
        async () => {
          const response = await send();
          if (response.status === 200) euAdmitted++;
          else await sleep(50);
        },
      );
      await until('eu’s first grant', () => (grantOf(app.limiter) ?? 0) >= 5);

      // Region us, on its own store, the same global store: it gets the budget eu was not granted, no more.
      const us = createLimiter({
        rules: compileRules(RULES),
        store: regional(),
        regions: { region: 'us', global },
        logger: notices,
      });
      closing.push(() => us.close());
      let usAdmitted = 0;
      await until(
        'us to spend what eu does not hold',
        () => usAdmitted + (grantOf(app.limiter) ?? 0) >= LIMIT,
        async () => {
          const decision = await us.check({ route: '/search', api_key: 'us-client' });
          if (decision.allowed) usAdmitted++;
          else await sleep(Math.min(decision.retryAfterMs, 50));
        },
      );
      const euGrant = grantOf(app.limiter)!;
      expect(usAdmitted).toBe(LIMIT - euGrant);
      expect(grantOf(us)).toBe(usAdmitted);
      const refused = await us.check({ route: '/search', api_key: 'us-client' });
      expect(refused.allowed).toBe(false);
      expect(refused.rule).toBe(GLOBAL_RULE);
      expect(refused.limit).toBe(LIMIT);

      // eu spends the rest of its grant, then is refused by the global rule: the budget is gone.
      for (let i = euAdmitted; i < euGrant; i++) expect((await send()).status).toBe(200);
      const denied = await send();
      expect(denied.status).toBe(429);
      expect(denied.headers.get('x-ratelimit-rule')).toBe(GLOBAL_RULE);
      expect(denied.headers.get('ratelimit-policy')).toContain(`q=${LIMIT}`);
      expect(notices.count('SLUICE_GLOBAL_UNREACHABLE')).toBe(0);
    }, 60_000);
  },
);

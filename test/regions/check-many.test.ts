/**
 * checkMany with regions (issue 44): several descriptor sets as one request (an Envoy call's descriptors), in
 * one call to the region's store; each set's global rule draws on the global budget another region sees, and
 * while the global store is out of reach each set's decision is marked as decided on the region's share.
 */
import { compileRules, createLimiter, type Limiter } from '@sluice/core';
import { RedisStore, recommendedRedisOptions } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix, ready, redisSuite } from '../support/redis.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { GLOBAL_RULE, searchRules } from './apps.js';
import { GLOBAL_TIMEOUT_MS, Notices } from './fleet.js';
import { Tally } from './load.js';

const LIMIT = 30;
const RULES = compileRules(searchRules(LIMIT, '1h'));
const redis = redisSuite();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const sets = (who: string) =>
  ['a', 'b', 'c'].map((k) => ({ descriptors: { route: '/search', api_key: `${who}-${k}` } }));

function grantOf(limiter: Limiter): number {
  return limiter.explain({ route: '/search' }).rules.find((r) => r.rule === GLOBAL_RULE)?.budget?.grant ?? 0;
}

describe('checkMany with regions', () => {
  it('counts each set’s global rule on the global budget, and marks them while cut off', async () => {
    const proxy = await startTcpProxy(redis.server.port, { delayMs: 25 });
    closing.push(() => proxy.close());
    const far = new Redis({ host: proxy.host, port: proxy.port, ...recommendedRedisOptions });
    far.on('error', () => {});
    await ready(far);
    closing.push(() => far.disconnect());
    const prefix = randomPrefix('g');
    const notices = new Notices();
    const region = (name: string, client: Redis) => {
      const tally = new Tally(GLOBAL_RULE, 1000);
      const limiter = createLimiter({
        rules: RULES,
        store: new RedisStore({ client: redis.client, prefix: randomPrefix('r'), logger: notices }),
        regions: {
          region: name,
          global: new RedisStore({ client, prefix, timeoutMs: GLOBAL_TIMEOUT_MS, logger: notices }),
        },
        observer: tally.observer,
        logger: notices,
      });
      closing.push(() => limiter.close());
      return { limiter, tally };
    };
    const eu = region('eu', far);
    const us = region('us', redis.client);

    // eu: calls of three sets, all or nothing, until 12 units went through.
    let euAdmitted = 0;
    while (euAdmitted < 12) {
      const decisions = await eu.limiter.checkMany(sets('eu'));
      expect(decisions).toHaveLength(3);
      if (decisions.every((d) => d.allowed)) euAdmitted += 3;
      else await sleep(30);
    }
    // us gets what eu was not granted, and no more.
    let usAdmitted = 0;
    const deadline = Date.now() + 10_000;
    while (usAdmitted + grantOf(eu.limiter) < LIMIT && Date.now() < deadline) {
      const [decision] = await us.limiter.checkMany([sets('us')[0]!]);
      if (decision!.allowed) usAdmitted++;
      else await sleep(30);
    }
    expect(grantOf(eu.limiter)).toBeGreaterThanOrEqual(euAdmitted);
    expect(usAdmitted).toBe(LIMIT - grantOf(eu.limiter));

    // eu cut off: each set's decision says it was decided on eu's share of the budget.
    proxy.blackhole(true);
    let marked: Awaited<ReturnType<Limiter['checkMany']>> = [];
    const cutDeadline = Date.now() + 10_000;
    while (marked.length === 0 && Date.now() < cutDeadline) {
      const decisions = await eu.limiter.checkMany(sets('cut'));
      if (decisions.every((d) => d.reason === 'global_unreachable')) marked = decisions;
      else await sleep(50);
    }
    expect(marked).toHaveLength(3);
    for (const decision of marked) {
      const global = decision.results.find((r) => r.rule === GLOBAL_RULE);
      expect(global).toMatchObject({ failed: true, fallback: true });
      expect(decision.failedOpen).toBe(decision.allowed);
    }
    expect(notices.count('SLUICE_GLOBAL_UNREACHABLE')).toBe(1);
    expect(eu.tally.count('unreachable')).toBe(1);
    proxy.resetAll();
    proxy.blackhole(false);
  }, 60_000);
});

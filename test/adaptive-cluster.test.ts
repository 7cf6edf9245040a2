/**
 * Adaptive factors through every client kind (ioredis, node-redis; one server, a 3-master Cluster): the same steps
 * as core's, shared by two stores, each rule's key in a slot of its own.
 */

import type { AdaptivePolicy } from '@sluice/core';
import type { FactorReport } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_DEFAULTS } from '../packages/core/src/rules/adaptivePolicy.js';
import { MemoryFactors } from '../packages/core/src/store/memoryFactors.js';
import { CLIENT_KINDS, clientKinds } from './support/client-kinds.js';
import { randomPrefix } from './support/redis.js';

const { clientOf } = clientKinds();

const policy: AdaptivePolicy = { ...ADAPTIVE_DEFAULTS, errorRate: 0.1, minSamples: 10 };

describe.each(CLIENT_KINDS)('on %s', (where) => {
  it('two stores share each rule’s factor, stepping as core does', async () => {
    const prefix = randomPrefix('ad');
    const [a, b] = [0, 1].map(
      () => new RedisStore({ client: clientOf(where), prefix, timeoutMs: 5000, breaker: false }),
    ) as [RedisStore, RedisStore];
    const memory = new MemoryFactors();
    const fromRedis: number[] = [];
    const fromMemory: number[] = [];
    let now = 3_000_000;
    for (let i = 0; i < 12; i++) {
      now += 600;
      for (const id of ['api/payments', 'api/search']) {
        const report: FactorReport = {
          id,
          policy,
          requests: 20,
          errors: i < 6 && id === 'api/payments' ? 6 : 0,
          slow: 0,
        };
        fromRedis.push(await (i % 2 === 0 ? a : b).adaptFactor(report, now));
        fromMemory.push(memory.adaptFactor(report, now));
      }
    }
    expect(fromRedis).toEqual(fromMemory);
    expect(Math.min(...fromMemory)).toBeLessThan(0.5);
  });
});

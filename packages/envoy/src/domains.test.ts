/**
 * Two domains on one store, through the real gRPC client: Envoy-format configs with the same descriptors keep
 * each domain's counters apart, as envoyproxy/ratelimit does (its cache key starts with the domain). And shadow
 * rules: a would-be refusal is reported, never counted (where envoyproxy/ratelimit counts every hit), so a rule
 * switched from shadow to enforce mid-window starts from its limit, not from the traffic it saw.
 */
import { compileRules, MemoryStore } from '@sluice/core';
import type { Store } from '@sluice/core/store';
import { RedisStore } from '@sluice/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, randomPrefix, ready, startRedis } from '../../../test/support/redis.js';
import { parseEnvoyConfig } from './envoyConfig.js';
import { createRateLimitService, type RateLimitService } from './service.js';
import { d, rlsClient } from './testing/client.js';

const quiet = { warn() {} };
const configOf = (domain: string) => `
domain: ${domain}
descriptors:
  - key: user
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: tenant
    value: acme
    rate_limit: {unit: hour, requests_per_unit: 1}
`;

let server: RedisServer;
let redis: Redis;
const opened: { service: RateLimitService; client: ReturnType<typeof rlsClient> }[] = [];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis({ host: server.host, port: server.port });
  await ready(redis);
});
afterAll(async () => {
  for (const { service, client } of opened) {
    client.close();
    await service.close();
  }
  redis.disconnect();
  await server.stop();
});

async function serve(
  rules: Parameters<typeof createRateLimitService>[0]['rules'],
  store: Store = new MemoryStore(),
) {
  const service = await createRateLimitService({ rules, store, port: 0, watch: false, logger: quiet });
  const client = rlsClient(service.port);
  opened.push({ service, client });
  return { service, client };
}

describe('two domains on one Redis', () => {
  it('keep their counters apart, each to its own limit, for keyed and fixed-value descriptors', async () => {
    const prefix = randomPrefix();
    const storeOf = () => new RedisStore({ client: redis, prefix, timeoutMs: 5000, breaker: false });
    const a = await serve(parseEnvoyConfig(configOf('alpha')).table, storeOf());
    const b = await serve(parseEnvoyConfig(configOf('beta')).table, storeOf());
    const ask = async (
      to: { client: ReturnType<typeof rlsClient> },
      domain: string,
      descriptor: ReturnType<typeof d>,
    ) => (await to.client.shouldRateLimit({ domain, descriptors: [descriptor] })).statuses[0]!;
    const user = d(['user', 'u1']);
    const tenant = d(['tenant', 'acme']);
    expect((await ask(a, 'alpha', user)).limit_remaining).toBe(1);
    expect((await ask(a, 'alpha', user)).limit_remaining).toBe(0);
    expect((await ask(a, 'alpha', user)).code).toBe('OVER_LIMIT');
    expect((await ask(a, 'alpha', tenant)).code).toBe('OK');
    expect((await ask(a, 'alpha', tenant)).code).toBe('OVER_LIMIT');
    // The same descriptors in the other domain: a counter of their own, untouched by alpha's.
    expect(await ask(b, 'beta', user)).toMatchObject({ code: 'OK', limit_remaining: 1 });
    expect(await ask(b, 'beta', tenant)).toMatchObject({ code: 'OK', limit_remaining: 0 });
    expect((await ask(b, 'beta', user)).limit_remaining).toBe(0);
    expect((await ask(b, 'beta', user)).code).toBe('OVER_LIMIT');
    // Four counters in Redis (two per domain), not two.
    expect((await redis.keys(`${prefix}:*`)).length).toBe(4);
  });
});

describe('a shadow rule', () => {
  it('reports would-be refusals without counting them: switched to enforce, it starts from its limit', async () => {
    const rule = (mode: 'shadow' | 'enforce', requests: number) =>
      compileRules({
        domain: 'shop',
        rules: [{ name: 'per_user', match: {}, key: ['user'], limit: { requests, per: '1h' }, mode }],
      });
    const { service, client } = await serve(rule('shadow', 2));
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await client.shouldRateLimit({ domain: 'shop', descriptors: [d(['user', 'u1'])] });
      codes.push(response.statuses[0]!.code);
    }
    // Never refused (the three would-be refusals go to the observer, not into the count).
    expect(codes).toEqual(['OK', 'OK', 'OK', 'OK', 'OK']);
    service.limiter.setRules(rule('enforce', 4));
    const after: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await client.shouldRateLimit({ domain: 'shop', descriptors: [d(['user', 'u1'])] });
      after.push(response.statuses[0]!.code);
    }
    // 2 counted of 4: two more pass (envoyproxy/ratelimit, having counted all 5 hits, would refuse at once).
    expect(after).toEqual(['OK', 'OK', 'OVER_LIMIT']);
  });
});

/**
 * The shared policy vectors (test/vectors/policies: bans and escalation, penalty, idempotency) on RedisStore
 * over ioredis and node-redis, on one server and on a 3-master Cluster, as MemoryStore runs them.
 */
import { hashText } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { describe, expect, it } from 'vitest';
import { CLIENT_KINDS, clientKinds } from './support/client-kinds.js';
import { randomPrefix } from './support/redis.js';
import { loadPolicyVectors, runPolicyCase } from './vectors/policyVectors.js';

const kinds = clientKinds();

describe.each(CLIENT_KINDS)('policy vectors on %s', (kind) => {
  it.each(loadPolicyVectors())('$name', async (policyCase) => {
    const store = new RedisStore({
      client: kinds.clientOf(kind),
      prefix: randomPrefix('pol'),
      timeoutMs: 5000,
      breaker: false,
    });
    try {
      const counter = { rule: 'vector', tag: hashText(policyCase.name) };
      expect(await runPolicyCase(store, policyCase, counter)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

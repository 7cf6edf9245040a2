import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, createLimiter, RulesError } from '@sluice/core';
import type { RulesSource } from '@sluice/core/store';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  freePort,
  type RedisServer,
  randomPrefix,
  startCluster,
  startRedis,
} from '../../../test/support/redis.js';
import { nextEvent } from '../../../test/support/rules.js';
import { recommendedRedisOptions } from './clientOptions.js';
import { publishRules, redisRules, rulesChannel, rulesKey } from './distribution.js';

const DOMAIN = 'gateways';
const rulesText = (limit: number, domain = DOMAIN) => `domain: ${domain}
rules:
  - name: per_key
    key: [api_key]
    limit: {requests: ${limit}, per: 60s}
    owner: team-test
`;

let server: RedisServer;
const clients: Redis[] = [];
const sources: RulesSource[] = [];

function client(port = server.port, options: RedisOptions = {}): Redis {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    retryStrategy: () => 50,
    maxRetriesPerRequest: 1,
    ...options,
  });
  redis.on('error', () => {});
  clients.push(redis);
  return redis;
}

async function gateway(options: Parameters<typeof redisRules>[1], redis = client()) {
  const source = await redisRules(redis, options);
  sources.push(source);
  return source;
}

beforeAll(async () => {
  server = await startRedis();
});

afterAll(async () => {
  for (const source of sources) await source.close?.();
  for (const redis of clients) redis.disconnect();
  await server?.stop();
});

describe('rules distribution through Redis', () => {
  test('two gateways switch versions on publish; a bad payload keeps the last good one', async () => {
    const prefix = randomPrefix();
    const publisher = client();
    const v1 = await publishRules(publisher, rulesText(1), { domain: DOMAIN, source: 'v1.yaml', prefix });
    expect(v1).toMatchObject({ domain: DOMAIN, serial: 1, receivers: 0 });

    const sourceA = await gateway({ domain: DOMAIN, prefix });
    const sourceB = await gateway({ domain: DOMAIN, prefix });
    const [a, b] = [createLimiter({ rules: sourceA }), createLimiter({ rules: sourceB })];
    expect([a.version, b.version]).toEqual([v1.version, v1.version]);
    await a.check({ api_key: 'k' });
    expect((await a.check({ api_key: 'k' })).allowed).toBe(false);

    const switched = [nextEvent(sourceA), nextEvent(sourceB)];
    const v2 = await publishRules(publisher, rulesText(5), { source: 'v2.yaml', prefix });
    expect(v2).toMatchObject({ serial: 2, receivers: 2 });
    expect(await Promise.all(switched)).toMatchObject([{ version: v2.version }, { version: v2.version }]);
    expect([a.version, b.version]).toEqual([v2.version, v2.version]);
    expect((await a.check({ api_key: 'k' })).allowed).toBe(true);

    // Invalid rules under a higher serial, then no JSON at all: both are reported and change nothing.
    const channel = rulesChannel(DOMAIN, prefix);
    const invalid = [nextEvent(sourceA), nextEvent(sourceB)];
    await publisher.publish(
      channel,
      JSON.stringify({ serial: 99, text: rulesText(5).replace('60s', '60x') }),
    );
    const errors = await Promise.all(invalid);
    for (const error of errors) {
      expect(error).toBeInstanceOf(RulesError);
      expect((error as Error).message).toMatch(
        /:5:\d+ rules\[0\]\.limit\.per: `limit\.per` must be a duration .*, got "60x"/,
      );
    }
    // Both gateways must have heard the garbage before the next publish, or B could report it to `third`.
    const garbage = [nextEvent(sourceA), nextEvent(sourceB)];
    await publisher.publish(channel, 'not json');
    for (const error of await Promise.all(garbage)) expect(error).toBeInstanceOf(SyntaxError);
    expect([a.version, b.version]).toEqual([v2.version, v2.version]);

    // The bad payloads did not block later versions.
    const third = nextEvent(sourceB);
    const v3 = await publishRules(publisher, rulesText(7), { prefix });
    expect(await third).toMatchObject({ version: v3.version });
  });

  test('publishRules refuses invalid rules and the wrong domain, storing nothing', async () => {
    const prefix = randomPrefix();
    const publisher = client();
    await expect(
      publishRules(publisher, rulesText(1).replace('per_key', 'Per-Key'), { prefix }),
    ).rejects.toThrow(RulesError);
    await expect(publishRules(publisher, rulesText(1), { domain: 'other', prefix })).rejects.toThrow(
      /is for domain "gateways", not "other"/,
    );
    expect(await publisher.exists(rulesKey(DOMAIN, prefix))).toBe(0);
    await expect(redisRules(client(), { domain: DOMAIN, prefix })).rejects.toThrow(ConfigError);
  });

  test('a client without an offline queue, not yet connected, still loads from Redis', async () => {
    const prefix = randomPrefix();
    const v1 = await publishRules(client(), rulesText(4), { prefix });
    for (const options of [recommendedRedisOptions, { ...recommendedRedisOptions, lazyConnect: true }]) {
      const warnings: string[] = [];
      const source = await gateway(
        { domain: DOMAIN, prefix, file: 'does-not-exist.yaml', warn: (m) => warnings.push(m) },
        client(server.port, options),
      );
      expect(source.current.version).toBe(v1.version);
      expect(warnings).toEqual([]);
    }
  });

  test.each([
    ['an offline queue', {}],
    ['recommendedRedisOptions', recommendedRedisOptions],
  ])(
    'a gateway starting while Redis is down uses its file, says so, and follows Redis once it is back (%s)',
    async (_name, options) => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-dist-'));
      const file = join(dir, 'rules.yaml');
      writeFileSync(file, rulesText(3));
      const port = await freePort();
      const warnings: string[] = [];
      const rulesErrors: Error[] = [];
      try {
        const source = await gateway(
          { domain: DOMAIN, file, startTimeoutMs: 300, warn: (m) => warnings.push(m) },
          client(port, options),
        );
        const limiter = createLimiter({
          rules: source,
          observer: { onRulesError: (e) => rulesErrors.push(e) },
        });
        expect(limiter.rules.rules[0]?.params.limit).toBe(3);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain(`using ${file}`);
        expect(rulesErrors).toHaveLength(1);

        const back = await startRedis({ port });
        try {
          const published = nextEvent(source);
          await publishRules(client(port), rulesText(9));
          expect(await published).toMatchObject({ rules: [{ params: { limit: 9 } }] });
          expect(limiter.rules.rules[0]?.params.limit).toBe(9);
        } finally {
          await back.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('rules distribution through a Redis Cluster', () => {
  test('gateways on different nodes switch on publish', async () => {
    const cluster = await startCluster(3);
    const clusterClients: Cluster[] = [];
    const connect = () => {
      const c = new Cluster([...cluster.nodes], { redisOptions: { maxRetriesPerRequest: 1 } });
      c.on('error', () => {});
      clusterClients.push(c);
      return c;
    };
    try {
      const prefix = randomPrefix();
      const v1 = await publishRules(connect(), rulesText(1), { prefix });
      const sources = [
        await redisRules(connect(), { domain: DOMAIN, prefix }),
        await redisRules(connect(), { domain: DOMAIN, prefix }),
      ];
      expect(sources.map((s) => s.current.version)).toEqual([v1.version, v1.version]);
      const switched = sources.map(nextEvent);
      const v2 = await publishRules(connect(), rulesText(2), { prefix });
      expect(await Promise.all(switched)).toMatchObject([{ version: v2.version }, { version: v2.version }]);
      for (const source of sources) await source.close?.();
    } finally {
      for (const c of clusterClients) c.disconnect();
      await cluster.stop();
    }
  });
});

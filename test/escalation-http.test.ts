/**
 * Escalation stages over loopback HTTP on Fastify, Express and Koa, on MemoryStore and on a RedisStore of a
 * private redis-server: a warning past `warn_at`, the 429 at the limit, a challenge stage after
 * `challenge.after` violations, then the ban; each in the `Sluice-Stage` header and the 429's body.
 */
import { MemoryStore, type RuleSpec, type Store } from '@sluice/core';
import { prometheusObserver } from '@sluice/prometheus';
import { RedisStore } from '@sluice/redis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FRAMEWORKS,
  type Framework,
  type LimiterSetup,
  startServer,
  type TestServer,
} from './client/servers.js';
import { randomPrefix, redisSuite } from './support/redis.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const redis = redisSuite();

const STAGED: RuleSpec = {
  name: 'api',
  key: ['ip'],
  limit: { requests: 4, per: '1m' },
  algorithm: 'fixed_window',
  warn_at: '75%',
  ban: { after: 4, within: '10m', for: '1h' },
  challenge: { after: 2 },
};

const STORES: Record<string, () => Store> = {
  memory: () => new MemoryStore(),
  redis: () =>
    new RedisStore({ client: redis.client, prefix: randomPrefix('esc'), timeoutMs: 5000, breaker: false }),
};

interface Seen {
  readonly status: number;
  readonly stage: string | null;
  readonly body: unknown;
}

describe.each(
  FRAMEWORKS.flatMap((framework) => Object.keys(STORES).map((store) => [framework, store] as const)),
)('on %s with %s', (framework: Framework, storeName: string) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(setup: Partial<LimiterSetup>): Promise<string> {
    server = await startServer(framework, {
      clock: () => T0,
      store: STORES[storeName]?.(),
      challenge: { secret: 'a-challenge-secret-for-tests' },
      ...setup,
    });
    return server.url;
  }

  async function hit(url: string): Promise<Seen> {
    const response = await fetch(`${url}/items`);
    const body = response.status === 200 ? undefined : await response.json();
    return { status: response.status, stage: response.headers.get('sluice-stage'), body };
  }

  it('warns past warn_at, answers 429, then challenges, then bans', async () => {
    const lines: object[] = [];
    const logger = { warn: () => {}, info: (entry: object) => lines.push(entry) };
    const observer = prometheusObserver();
    const url = await start({
      rules: { domain: 'esc', rules: [STAGED] },
      logger,
      decisionLog: true,
      observer,
    });
    const seen: Seen[] = [];
    for (let i = 0; i < 9; i++) seen.push(await hit(url));
    expect(seen.map((s) => [s.status, s.stage])).toEqual([
      [200, null],
      [200, null],
      [200, 'warn;rule="api"'],
      [200, 'warn;rule="api"'],
      [429, 'limit;rule="api"'],
      [429, 'challenge;rule="api"'],
      [429, 'challenge;rule="api"'],
      [429, 'ban;rule="api"'],
      [429, 'ban;rule="api"'],
    ]);
    expect(seen[4]?.body).toMatchObject({ error: 'rate_limited', rule: 'api', stage: 'limit' });
    expect(seen[5]?.body).toMatchObject({ stage: 'challenge' });
    expect(seen[7]?.body).toMatchObject({ stage: 'ban', reason: 'ban' });
    const warnings = lines.filter((line) => (line as { event?: string }).event === 'rate_limit_warning');
    expect(warnings).toEqual([
      { event: 'rate_limit_warning', rule: 'api', used: 0.75 },
      { event: 'rate_limit_warning', rule: 'api', used: 1 },
    ]);
    const metrics = await observer.metrics();
    const count = (stage: string) =>
      Number(new RegExp(`sluice_stages_total\\{rule="api",stage="${stage}"\\} (\\d+)`).exec(metrics)?.[1]);
    expect(['warn', 'limit', 'challenge', 'ban'].map(count)).toEqual([2, 1, 2, 2]);
    expect(metrics).not.toContain('127.0.0.1');
  });

  it('leaves the responses of rules without stages as they were', async () => {
    const { warn_at: _warn, challenge: _challenge, ...plain } = STAGED;
    const url = await start({ rules: { domain: 'esc', rules: [plain] } });
    const seen: Seen[] = [];
    for (let i = 0; i < 6; i++) seen.push(await hit(url));
    expect(seen.map((s) => s.stage)).toEqual([null, null, null, null, null, null]);
    expect(seen[4]?.body).not.toHaveProperty('stage');
  });
});

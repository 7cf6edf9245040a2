/**
 * The adapters' `lists` option, the `client_ip` descriptor and `retry_jitter`, on Fastify, Express and Koa over
 * loopback HTTP: allow and deny lists match the resolved, trusted client address only.
 */
import { type RuleSpec, valueList } from '@sluice/core';
import { createHttpLimiter } from '@sluice/core/http';
import { afterEach, describe, expect, it } from 'vitest';
import { JITTERED_CAP } from './client/retryRules.js';
import {
  FRAMEWORKS,
  type Framework,
  type LimiterSetup,
  startServer,
  type TestServer,
} from './client/servers.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const clock = () => T0;

describe.each(FRAMEWORKS.map((framework) => [framework] as const))('on %s', (framework: Framework) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(setup: Partial<LimiterSetup>): Promise<string> {
    server = await startServer(framework, { clock, ...setup });
    return server.url;
  }

  const get = (url: string, forwardedFor?: string) =>
    fetch(`${url}/items`, forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } });

  async function statuses(url: string, forwardedFor: string | undefined, times: number): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < times; i++) seen.push((await get(url, forwardedFor)).status);
    return seen;
  }

  it('takes lists in code: a deny list on client_ip refuses the trusted address it holds', async () => {
    const url = await start({
      rules: { domain: 'lists', rules: RULES_WITH_LIST },
      lists: LISTS,
      trustProxy: true,
    });
    const refused = await get(url, '203.0.113.9');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden', rule: 'blocked' });
    expect(await statuses(url, '198.51.100.1', 2)).toEqual([200, 429]);
  });

  it('matches client_ip on the whole IPv6 address, not its /64', async () => {
    const url = await start({
      rules: { domain: 'lists', rules: RULES_WITH_LIST },
      lists: LISTS,
      trustProxy: true,
    });
    expect(await statuses(url, '2001:db8:0:1::42', 3)).toEqual([200, 200, 200]);
    // Same /64, another host: the per-IP rule applies.
    expect(await statuses(url, '2001:db8:0:1::43', 2)).toEqual([200, 429]);
  });

  it('never lets an untrusted X-Forwarded-For reach an allow or deny list', async () => {
    const url = await start({ rules: { domain: 'lists', rules: RULES_WITH_LIST }, lists: LISTS });
    // The peer (127.0.0.1) is no trusted proxy: the header is the client's word, and the client is 127.0.0.1.
    expect(await statuses(url, '2001:db8:0:1::42', 2)).toEqual([200, 429]);
    expect((await get(url, '203.0.113.9')).status).toBe(429);
  });

  it('spreads the Retry-After of clients denied together over [exact, exact + 10%] with retry_jitter', async () => {
    const url = await start({
      rules: {
        domain: 'jitter',
        rules: [JITTERED_CAP],
      },
    });
    expect((await get(url)).status).toBe(200);
    const waits = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const response = await get(url);
        expect(response.status).toBe(429);
        return Number(response.headers.get('retry-after'));
      }),
    );
    // The clock stands still: the exact wait is the whole window, 60 s, for every one of them.
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(60);
      expect(wait).toBeLessThanOrEqual(66);
    }
    expect(new Set(waits).size).toBeGreaterThan(1);
  });
});

const LISTS = { blocked: valueList(['203.0.113.0/24']) };

const RULES_WITH_LIST: RuleSpec[] = [
  { name: 'office', match: { client_ip: '2001:db8:0:1::42' }, action: 'allow' },
  { name: 'blocked', match: { client_ip: { list: 'blocked' } }, action: 'deny' },
  { name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '60s' }, algorithm: 'fixed_window' },
];

describe('route rules naming a list', () => {
  it('are refused when the list was not given', () => {
    const http = createHttpLimiter({
      rules: { domain: 'd', rules: RULES_WITH_LIST },
      lists: LISTS,
      logger: { warn() {} },
    });
    expect(() =>
      http.compileRouteRules(
        [{ name: 'partners_only', match: { tenant: { list: 'partners' } }, action: 'deny' }],
        'route GET /x',
      ),
    ).toThrow('route GET /x: the rules name lists not given in the lists option: partners');
  });
});

/**
 * Retries as a descriptor: @sluice/client names each retry in `Retry-Attempt`, and Sluice servers on Fastify,
 * Express and Koa match rules on it (`retry`, `retry_attempt`), over loopback HTTP.
 */
import { createFetch } from '@sluice/client';
import type { RuleSpec } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SEPARATE_RETRIES } from './retryRules.js';
import { FRAMEWORKS, type Framework, startServer, type TestServer } from './servers.js';
import { VirtualTime } from './virtualTime.js';

/** A window boundary: fixed windows of 10 s and 60 s both start here. */
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  'retry rules on %s with @sluice/client',
  (framework: Framework) => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** A server whose clock never moves, and a client whose waits take no time. */
    async function setUp(rules: RuleSpec[], retryHeader?: string) {
      const time = new VirtualTime(T0);
      server = await startServer(framework, {
        rules: { domain: 'retries', rules },
        clock: time.clock,
        ...(retryHeader === undefined ? {} : { retryHeader }),
      });
      const client = createFetch({
        now: time.clock,
        sleep: async () => {},
        pacing: false,
        maxWaitMs: 120_000,
        ...(retryHeader === undefined ? {} : { retryHeader }),
      });
      return { url: server.url, hits: server.hits, client };
    }

    it('sends Retry-Attempt: 1, 2 on retries; a retry rule counts them apart and caps them', async () => {
      const { url, hits, client } = await setUp(SEPARATE_RETRIES);
      expect((await client(`${url}/items`)).status).toBe(200);
      // Refused as a first try, let through as a retry (the retries' own counter).
      expect((await client(`${url}/items`)).status).toBe(200);
      // The retries' counter is spent now: every retry is refused by it, and the client gives up.
      const capped = await client(`${url}/items`);
      expect(capped.status).toBe(429);
      expect(capped.headers.get('x-ratelimit-rule')).toBe('retries');
      expect(hits.map((hit) => hit.retry)).toEqual([undefined, undefined, '1', undefined, '1', '2']);
    });

    it('matches a retry by its number: a deny rule refuses the second retry', async () => {
      const { url, hits, client } = await setUp([
        { name: 'per_ip', key: ['ip'], limit: { requests: 1, per: '10s' }, algorithm: 'fixed_window' },
        { name: 'no_second_retry', match: { retry_attempt: [2, 3, 4] }, action: 'deny' },
      ]);
      expect((await client(`${url}/items`)).status).toBe(200);
      const refused = await client(`${url}/items`);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: 'forbidden', rule: 'no_second_retry' });
      expect(hits.map((hit) => hit.retry)).toEqual([undefined, undefined, '1', '2']);
    });

    it('reads the header both sides are told to use', async () => {
      const { url, client } = await setUp(
        [{ name: 'no_retries', match: { retry: true }, action: 'deny' }, ...SEPARATE_RETRIES.slice(0, 1)],
        'X-Retry-Number',
      );
      expect((await client(`${url}/items`)).status).toBe(200);
      expect((await client(`${url}/items`)).status).toBe(403);
    });
  },
);

/** Pacing on the real clock: a burst of concurrent requests spread so that the server refuses none. */
import { createFetch } from '@sluice/client';
import type { RuleSpec } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { FRAMEWORKS, type Framework, startServer, type TestServer } from './servers.js';

const LIMIT = 4;
const rule: RuleSpec = {
  name: 'per_ip',
  key: ['ip'],
  limit: { requests: LIMIT, per: '1s' },
  algorithm: 'fixed_window',
};
const BURST = 10;

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  'pacing against %s',
  (framework: Framework) => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** Sends BURST requests at once; answers the statuses the server gave, every attempt counted. */
    async function burst(pacing: boolean): Promise<{ statuses: number[]; paced: number }> {
      server = await startServer(framework, { rules: { domain: 'client', rules: [rule] } });
      const statuses: number[] = [];
      let paced = 0;
      const client = createFetch({
        pacing,
        maxAttempts: 1,
        // Sees every attempt's answer, refused ones included.
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          statuses.push(response.status);
          return response;
        },
        events: { wait: (event) => (paced += event.reason === 'pacing' ? 1 : 0) },
      });
      const url = `${server.url}/items`;
      await Promise.all(
        Array.from({ length: BURST }, () => client(url).then((response) => response.arrayBuffer())),
      );
      return { statuses, paced };
    }

    it('spreads a burst over the windows the RateLimit fields describe: no request is refused', async () => {
      const { statuses, paced } = await burst(true);
      expect(statuses).toEqual(Array(BURST).fill(200));
      expect(paced).toBeGreaterThanOrEqual(BURST - LIMIT);
    }, 30_000);

    it('without pacing, the same burst is refused in part (the test above can fail)', async () => {
      const { statuses } = await burst(false);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(BURST - 2 * LIMIT);
    });
  },
);

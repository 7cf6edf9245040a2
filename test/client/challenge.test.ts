/**
 * @sluice/client and the challenge stage of real Sluice servers (Fastify, Express, Koa; MemoryStore), over
 * loopback HTTP: a 429 carrying a challenge is solved and the request sent again with the solution; the pass it
 * earns is sent on the next requests, which count nothing; a used-up pass is dropped and the next challenge
 * solved. `maxDifficulty` bounds the work, `challenge: false` turns it off. The server's metrics count each.
 */
import { type ClientOptions, createFetch, type SolvedEvent } from '@sluice/client';
import type { RuleSpec } from '@sluice/core';
import { prometheusObserver } from '@sluice/prometheus';
import { afterEach, describe, expect, it } from 'vitest';
import { FRAMEWORKS, type Framework, startServer, type TestServer } from './servers.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const RULE: RuleSpec = {
  name: 'api',
  key: ['ip'],
  limit: { requests: 2, per: '1m' },
  algorithm: 'fixed_window',
  ban: { after: 8, within: '10m', for: '1h' },
  challenge: { after: 1, difficulty: 8, pass: 3, for: '1m' },
};

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  '@sluice/client solving challenges of %s',
  (framework: Framework) => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    async function setUp(options: ClientOptions = {}) {
      const observer = prometheusObserver();
      const lines: object[] = [];
      server = await startServer(framework, {
        rules: { domain: 'c', rules: [RULE] },
        clock: () => T0,
        challenge: { secret: 'a-challenge-secret-for-tests' },
        observer,
        decisionLog: true,
        logger: { warn: () => {}, info: (line: object) => lines.push(line) },
      });
      const solved: SolvedEvent[] = [];
      const client = createFetch({
        maxAttempts: 1,
        pacing: false,
        events: { solved: (e) => solved.push(e) },
        ...options,
      });
      const url = `${server.url}/items`;
      return { observer, lines, solved, get: async () => (await client(url)).status };
    }

    it('solves, uses the pass, drops it used up and solves the next challenge', async () => {
      const { observer, lines, solved, get } = await setUp();
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push(await get());
      // 2 within the limit; a challenge solved (1 of the pass), 2 more on the pass; the pass used up: a
      // challenge solved again (one bit harder), and so on. Never a 429 to the caller.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200]);
      expect(solved.map((e) => e.difficulty)).toEqual([8, 9, 10]);
      expect(solved[0]?.origin).toBe(server?.url);
      const metrics = await observer.metrics();
      expect(metrics).toMatch(/sluice_stages_total\{rule="api",stage="solved"\} 3/);
      expect(metrics).toMatch(/sluice_stages_total\{rule="api",stage="challenge"\} 3/);
      expect(lines).toContainEqual({ event: 'challenge_solved', rule: 'api' });
    });

    it('leaves a challenge harder than maxDifficulty, or any with challenge: false, to the caller', async () => {
      const hard = await setUp({ challenge: { maxDifficulty: 7 } });
      expect([await hard.get(), await hard.get(), await hard.get()]).toEqual([200, 200, 429]);
      expect(hard.solved).toEqual([]);
      await server?.close();
      const off = await setUp({ challenge: false });
      expect([await off.get(), await off.get(), await off.get()]).toEqual([200, 200, 429]);
      expect(off.solved).toEqual([]);
    });

    it('refuses a replayed solution, counted by reason in the metrics and said in the decision log', async () => {
      const { observer, lines, get } = await setUp({ challenge: false });
      for (let i = 0; i < 3; i++) await get();
      const response = await fetch(`${server?.url}/items`);
      const { solveChallenge } = await import('@sluice/core/http');
      const { challenge } = (await response.json()) as { challenge: { token: string; difficulty: number } };
      const solution = solveChallenge(challenge);
      const first = await fetch(`${server?.url}/items`, { headers: { 'Sluice-Solution': solution } });
      const again = await fetch(`${server?.url}/items`, { headers: { 'Sluice-Solution': solution } });
      expect([first.status, again.status]).toEqual([200, 403]);
      expect(await again.json()).toMatchObject({ refused: 'replayed' });
      const metrics = await observer.metrics();
      expect(metrics).toMatch(/sluice_stages_total\{rule="api",stage="refused",reason="replayed"\} 1/);
      expect(lines).toContainEqual({
        event: 'challenge_refused',
        rule: 'api',
        reason: 'replayed',
        carrier: 'header',
      });
    });
  },
);

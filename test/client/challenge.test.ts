/**
 * @sluice/client and the challenge stage of real Sluice servers (Fastify, Express, Koa; MemoryStore), over
 * loopback HTTP: a 429 carrying a challenge is solved and the request sent again with the solution; the pass it
 * earns is sent on the next requests, which count nothing; a used-up pass is dropped and the next challenge
 * solved. `maxDifficulty` bounds the work, `challenge: false` turns it off. The server's metrics count each.
 * On the default options (pacing on) the solution goes at once, though the 429 said the window resets in 50 s,
 * and a used-up pass meets its next challenge with no pacing wait; the retry budget bounds the solving.
 */
import {
  type ClientOptions,
  createFetch,
  type GiveUpEvent,
  type SolvedEvent,
  type WaitEvent,
} from '@sluice/client';
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

describe.each(FRAMEWORKS.map((framework) => [framework] as const))(
  '@sluice/client on its default options, challenged by %s',
  (framework: Framework) => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    /** A server whose window resets in 50 s, the key's 2 requests spent by another client (plain fetch). */
    async function overLimit(options: ClientOptions = {}) {
      server = await startServer(framework, {
        rules: { domain: 'c', rules: [RULE] },
        clock: () => T0 + 10_000,
        challenge: { secret: 'a-challenge-secret-for-tests' },
        logger: { warn: () => {} },
      });
      const url = `${server.url}/items`;
      for (let i = 0; i < 2; i++) expect((await fetch(url)).status).toBe(200);
      const solved: SolvedEvent[] = [];
      const waits: WaitEvent[] = [];
      const exhausted: GiveUpEvent[] = [];
      const client = createFetch({
        ...options,
        events: {
          solved: (e) => solved.push(e),
          wait: (e) => waits.push(e),
          budgetExhausted: (e) => exhausted.push(e),
        },
      });
      // A regression waits out the 50 s: the signal turns it into a clear failure.
      const get = () => client(url, { signal: AbortSignal.timeout(8000) });
      return { server, solved, waits, exhausted, get };
    }

    it('sends the solution at once, and solves the challenge after a used-up pass with no pacing wait', async () => {
      const { server, solved, waits, get } = await overLimit();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await get()).status);
      // Each challenge solved, each pass (3 requests, the solution's included) used, then the next challenge.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
      expect(solved.map((e) => e.difficulty)).toEqual([8, 9, 10]);
      const mine = server.hits.slice(2);
      expect(mine.map((hit) => (hit.solution ? 'solution' : hit.pass ? 'pass' : 'plain'))).toEqual([
        'plain', // 429, challenge
        'solution',
        'pass',
        'pass',
        'pass', // used up: 429, the next challenge
        'solution',
        'pass',
        'pass',
        'pass', // used up again
        'solution',
      ]);
      // Every request went within 2 s of the answer before it (the 429's reset said 50 s); no pacing wait.
      const gaps = mine.slice(1).map((hit, i) => hit.at - mine[i]!.at);
      expect(Math.max(...gaps)).toBeLessThan(2000);
      expect(waits.filter((w) => w.ms > 1000)).toEqual([]);
    }, 30_000);

    it('solves within the retry budget: with none left, the challenge goes back as its 429', async () => {
      const { solved, exhausted, get } = await overLimit({ retryBudget: { ratio: 0.1, reserve: 1 } });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await get()).status);
      // The first challenge spends the one retry; 4 requests earn 0.4 of one: the next is not solved.
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(solved.map((e) => e.difficulty)).toEqual([8]);
      expect(exhausted).toEqual([
        expect.objectContaining({ status: 429, attempt: 1, reason: 'budget_exhausted' }),
      ]);
    }, 30_000);
  },
);

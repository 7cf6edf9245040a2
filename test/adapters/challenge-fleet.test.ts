/**
 * The challenge across a fleet: two servers (Fastify and Express) sharing one private redis-server and one secret.
 * A challenge issued by one is redeemed at the other, its replay refused at the first (the marker is in Redis),
 * and the pass earned at one is spent at both, its budget counted once for the fleet.
 */
import { solveChallenge } from '@sluice/core/http';
import { RedisStore } from '@sluice/redis';
import { afterEach, expect, it } from 'vitest';
import { randomPrefix, redisSuite } from '../support/redis.js';
import { adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

const redis = redisSuite();
const RULE = perIp(2, {
  algorithm: 'fixed_window',
  ban: { after: 6, within: '10m', for: '1h' },
  challenge: { after: 1, difficulty: 6, pass: 4, for: '1m' },
});

const running: RunningApp[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()));
});

it('redeems at one server a challenge of another; the replay and the pass are the fleet’s', async () => {
  const prefix = randomPrefix();
  const [a, b] = await Promise.all(
    ['fastify', 'express'].map(async (name) => {
      const adapter = adapters.find((candidate) => candidate.name === name)!;
      const app = await adapter.start({
        options: {
          clock: () => T0,
          logger: { warn: () => {} },
          rules: rules(RULE),
          challenge: { secret: 'a-challenge-secret-for-tests' },
          store: new RedisStore({ client: redis.client, prefix }),
          timeoutMs: 15_000,
        },
      });
      running.push(app);
      return `${app.url}/search`;
    }),
  );
  const statuses = [(await fetch(a!)).status, (await fetch(b!)).status];
  const challenged = await fetch(a!);
  statuses.push(challenged.status);
  expect(statuses).toEqual([200, 200, 429]);
  const { challenge } = (await challenged.json()) as { challenge: { token: string; difficulty: number } };
  const solution = solveChallenge(challenge);
  const solved = await fetch(b!, { headers: { 'Sluice-Solution': solution } });
  expect(solved.status).toBe(200);
  const replayed = await fetch(a!, { headers: { 'Sluice-Solution': solution } });
  expect(await replayed.json()).toMatchObject({ refused: 'replayed' });
  const pass = { 'Sluice-Pass': String(solved.headers.get('sluice-pass')) };
  // 4 in all: the solving one at b, then a, b, a; the 5th, at b, finds the pass used up.
  const spent = [];
  for (const url of [a, b, a, b]) spent.push((await fetch(url!, { headers: pass })).status);
  expect(spent).toEqual([200, 200, 200, 429]);
});

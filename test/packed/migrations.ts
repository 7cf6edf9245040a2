/**
 * What each MIGRATING.md pair is asked, over real HTTP (or, for rate-limiter-flexible, from its output): the same
 * questions to the before and the after program, whose answers must be equal.
 */
import { type UntilDenied, untilDenied } from './apps.js';

/** A program's answers, compared between before and after. */
export type Answers = Record<string, unknown>;

/** A pair's questions to a running server at `url`. */
type ServerProbe = (url: string) => Promise<Answers>;

async function denial(result: UntilDenied): Promise<Answers> {
  return { allowed: result.allowed, status: result.denied?.status, body: await result.denied?.text() };
}

async function statuses(url: string, count: number, init?: RequestInit): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    seen.push(response.status);
  }
  return seen;
}

const withKey = (key: string): RequestInit => ({ headers: { 'x-api-key': key } });

/** The questions for each library whose snippets are servers. */
export const SERVER_PROBES: Record<string, ServerProbe> = {
  'express-rate-limit': async (url) => ({
    keyed: await denial(await untilDenied(`${url}/`, 20, withKey('k1'))),
    otherKey: await statuses(`${url}/`, 1, withKey('k2')),
    health: await statuses(`${url}/health`, 7, withKey('k1')),
    anonymous: (await untilDenied(`${url}/`, 20)).allowed,
  }),
  '@fastify/rate-limit': async (url) => ({
    search: (await untilDenied(`${url}/search`, 20)).allowed,
    root: (await untilDenied(`${url}/`, 20)).allowed,
  }),
  'koa-ratelimit': async (url) => ({
    root: await denial(await untilDenied(`${url}/`, 20)),
    health: await statuses(`${url}/health`, 6),
  }),
};

/** What the answers must be, as MIGRATING.md describes them. */
export const EXPECTED: Record<string, Answers> = {
  'express-rate-limit': {
    keyed: { allowed: 5, status: 429, body: '{"error":"slow down"}' },
    otherKey: [200],
    health: [200, 200, 200, 200, 200, 200, 200],
    anonymous: 5,
  },
  '@fastify/rate-limit': { search: 3, root: 10 },
  'koa-ratelimit': {
    root: { allowed: 4, status: 429, body: 'Slow down' },
    health: [200, 200, 200, 200, 200, 200],
  },
};

/**
 * rate-limiter-flexible's pair prints `user allowed remaining retryAfterMs` per attempt. The wait is left out of
 * the comparison (rate-limiter-flexible's window starts at the first request, Sluice's on the clock, and a sliding
 * window can ask for more than one window), but must be a real wait of at most two windows.
 */
export function attempts(stdout: string): Answers {
  const lines = stdout.trim().split('\n');
  const waitsOk = lines.every((line) => {
    const [, allowed, , wait] = line.split(' ');
    return allowed === 'true' ? wait === '0' : Number(wait) > 0 && Number(wait) <= 120_000;
  });
  return { attempts: lines.map((line) => line.split(' ').slice(0, 3).join(' ')), waitsOk };
}

/** rate-limiter-flexible's expected attempts: three for alice, the fourth refused, bob untouched. */
export const EXPECTED_ATTEMPTS: Answers = {
  attempts: ['alice true 2', 'alice true 1', 'alice true 0', 'alice false 0', 'bob true 2'],
  waitsOk: true,
};

/**
 * The proof-of-work challenge over real HTTP on every adapter of the contract suite, in memory and on a private
 * redis-server: a 429 at the challenge stage carries a challenge (header and body); its solution earns a pass
 * of `pass` requests that count nothing; then the key is limited again. Replayed, forged and expired solutions
 * are refused with their reason, and each is counted by the observer.
 */

import type { RuleSpec } from '@sluice/core';
import { type ChallengeOptions, issueChallenge, solveChallenge } from '@sluice/core/http';
import { RedisStore } from '@sluice/redis';
import { parseItem } from 'structured-headers';
import { afterEach, describe, expect, it } from 'vitest';
import { randomPrefix, redisSuite } from '../support/redis.js';
import { type AdapterFactory, adapters, type RunningApp } from './apps.js';
import { perIp, rules, T0 } from './fixtures.js';

const SECRET = 'a-challenge-secret-for-tests';
const CHALLENGED = perIp(2, {
  algorithm: 'fixed_window',
  ban: { after: 6, within: '10m', for: '1h' },
  challenge: { after: 1, difficulty: 6, pass: 3, for: '1m' },
});

/** A route's own challenge rule, on `/limited`. */
const ROUTE_CHALLENGED: RuleSpec = {
  name: 'per_route',
  key: ['ip'],
  limit: { requests: 1, per: '60s' },
  algorithm: 'fixed_window',
  ban: { after: 6, within: '10m', for: '1h' },
  challenge: { after: 1, difficulty: 6, pass: 3, for: '1m' },
};

const redis = redisSuite();

type StoreKind = 'memory' | 'redis';
const cases = adapters.flatMap((adapter) =>
  (['memory', 'redis'] as const).map((store) => [`${adapter.name}, ${store}`, adapter, store] as const),
);

describe.each(cases)('challenge: %s', (_name, adapter: AdapterFactory, storeKind: StoreKind) => {
  let running: RunningApp | undefined;
  let now = T0;
  const stages: string[] = [];
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(
    challenge: ChallengeOptions = { secret: SECRET },
    trustProxy = false,
    routeRule?: RuleSpec,
  ): Promise<string> {
    now = T0;
    stages.length = 0;
    running = await adapter.start({
      trustProxy,
      ...(routeRule === undefined ? {} : { routeRule }),
      options: {
        clock: () => now,
        logger: { warn: () => {} },
        rules: rules(
          routeRule === undefined ? CHALLENGED : { ...CHALLENGED, limit: { requests: 100, per: '60s' } },
        ),
        challenge,
        observer: {
          onStage: (stage, _rule, reason) => stages.push(reason === undefined ? stage : `${stage}:${reason}`),
        },
        ...(storeKind === 'redis'
          ? { store: new RedisStore({ client: redis.client, prefix: randomPrefix() }), timeoutMs: 15_000 }
          : {}),
      },
    });
    return `${running.url}/search`;
  }

  /** Requests until the challenge stage; its challenge, read from the header (RFC 9651) and the body alike. */
  async function challenged(
    url: string,
    headers: Record<string, string> = {},
  ): Promise<{ token: string; difficulty: number }> {
    for (let i = 0; i < 4; i++) {
      const response = await fetch(url, { headers });
      if (response.status !== 429) continue;
      const header = response.headers.get('sluice-challenge');
      if (header === null) continue;
      const [token, params] = parseItem(header);
      const body = (await response.json()) as {
        stage: string;
        challenge: { token: string; difficulty: number };
      };
      expect(body.stage).toBe('challenge');
      expect(body.challenge.token).toBe(token);
      expect(params.get('alg')?.toString()).toBe('sha256-leading-zero-bits');
      expect(params.get('difficulty')).toBe(body.challenge.difficulty);
      return { token: String(token), difficulty: body.challenge.difficulty };
    }
    throw new Error('no challenge');
  }

  it('challenge issued, solved, pass used up, limited again; the solution replayed is refused', async () => {
    const url = await start();
    const challenge = await challenged(url);
    expect(challenge.difficulty).toBe(6);
    const solution = solveChallenge(challenge);
    const solved = await fetch(url, { headers: { 'Sluice-Solution': solution } });
    expect(solved.status).toBe(200);
    expect(solved.headers.get('sluice-stage')).toBe('solved;rule="per_ip"');
    const pass = solved.headers.get('sluice-pass');
    expect(pass).toBeTruthy();
    // The pass: 3 requests in all (the one that solved it included), none counted against per_ip.
    for (let i = 0; i < 2; i++)
      expect((await fetch(url, { headers: { 'Sluice-Pass': String(pass) } })).status).toBe(200);
    const after = await fetch(url, { headers: { 'Sluice-Pass': String(pass) } });
    expect(after.status).toBe(429);
    // The client is told to drop the pass.
    expect(after.headers.get('sluice-pass-over')).toBe('?1');
    expect(((await after.json()) as { stage: string }).stage).toBe('challenge');
    // Without the pass, the key is over its limit, as it was.
    expect((await fetch(url)).status).toBe(429);
    const replayed = await fetch(url, { headers: { 'Sluice-Solution': solution } });
    expect(replayed.status).toBe(403);
    expect(await replayed.json()).toMatchObject({ error: 'forbidden', rule: 'per_ip', refused: 'replayed' });
    expect(stages.filter((s) => s === 'solved' || s.startsWith('refused'))).toEqual([
      'solved',
      'refused:replayed',
    ]);
  });

  it('refuses a forged solution and an expired one, counting nothing', async () => {
    const url = await start({ secret: SECRET, ttlMs: 5000 });
    const challenge = await challenged(url);
    const forgedToken = challenge.token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const forged = await fetch(url, {
      headers: { 'Sluice-Solution': solveChallenge({ ...challenge, token: forgedToken }) },
    });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ refused: 'forged' });
    now += 5001;
    const expired = await fetch(url, { headers: { 'Sluice-Solution': solveChallenge(challenge) } });
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ refused: 'expired' });
    expect(stages.filter((s) => s.startsWith('refused'))).toEqual(['refused:forged', 'refused:expired']);
  });

  it('refuses each malformed solution with 403, naming its fault, and counts no violation for it', async () => {
    const url = await start({ secret: SECRET, ttlMs: 5000 });
    const challenge = await challenged(url);
    expect(challenge.difficulty).toBe(6);
    const [version, , keyHash, ...rest] = challenge.token.split('.');
    const nope = Buffer.from('nope').toString('base64url');
    const signedForNope = issueChallenge(SECRET, 'nope', String(keyHash), 6, now, 60_000);
    const shapes: [string, string, string | null][] = [
      ['garbage', 'malformed', null],
      ['', 'malformed', null],
      // Missing parts: a token cut short, a token without its counter.
      [`${version}.${nope}.${keyHash}:12`, 'malformed', null],
      [challenge.token, 'malformed', 'per_ip'],
      // An unknown rule: unsigned (the rule field changed), and signed with the secret but no rule's here.
      [solveChallenge({ ...challenge, token: [version, nope, keyHash, ...rest].join('.') }), 'forged', null],
      [solveChallenge(signedForNope), 'wrong_rule', null],
      // A bad signature on the rule's own token.
      [
        solveChallenge({
          ...challenge,
          token: challenge.token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        }),
        'forged',
        'per_ip',
      ],
    ];
    for (const [solution, refused, rule] of shapes) {
      const response = await fetch(url, { headers: { 'Sluice-Solution': solution } });
      expect([solution, response.status]).toEqual([solution, 403]);
      expect(await response.json()).toEqual({ error: 'forbidden', rule, retryAfter: null, refused });
      expect(response.headers.get('x-ratelimit-rule')).toBe(rule);
    }
    now += 5001;
    const expired = await fetch(url, { headers: { 'Sluice-Solution': solveChallenge(challenge) } });
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ rule: 'per_ip', refused: 'expired' });
    // None counted: the next 429 is the key's 2nd violation (one bit more), as if the 8 refusals were not sent.
    expect((await challenged(url)).difficulty).toBe(7);
    expect(stages.filter((s) => s.startsWith('refused'))).toEqual([
      ...shapes.map(([, refused]) => `refused:${refused}`),
      'refused:expired',
    ]);
  });

  it("redeems a route rule's solution through the global check, which refuses a malformed one", async () => {
    // The global rule has a challenge too: Express, Koa, Hono and Nest check it apart, before the route's.
    const url = (await start({ secret: SECRET }, false, ROUTE_CHALLENGED)).replace(/search$/, 'limited');
    const challenge = await challenged(url);
    const solved = await fetch(url, { headers: { 'Sluice-Solution': solveChallenge(challenge) } });
    expect(solved.status).toBe(200);
    expect(solved.headers.get('sluice-stage')).toBe('solved;rule="per_route"');
    const garbage = await fetch(url, { headers: { 'Sluice-Solution': 'garbage' } });
    expect(garbage.status).toBe(403);
    expect(await garbage.json()).toMatchObject({ rule: null, refused: 'malformed' });
    expect(stages.filter((s) => s === 'solved' || s.startsWith('refused'))).toEqual([
      'solved',
      'refused:malformed',
    ]);
  });

  it('answers a browser with the challenge page; a solution in its cookie earns a pass cookie', async () => {
    const url = await start();
    const challenge = await challenged(url);
    const page = await fetch(url, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(429);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('sluice-challenge')).toBeTruthy();
    expect(await page.text()).toContain('crypto.subtle.digest');
    const cookie = `sluice_solution=${encodeURIComponent(solveChallenge(challenge))}`;
    const solved = await fetch(url, { headers: { cookie } });
    expect(solved.status).toBe(200);
    const setCookie = String(solved.headers.get('set-cookie'));
    expect(setCookie).toMatch(/^sluice_pass=[^;]+; Path=\/; Max-Age=60; HttpOnly; SameSite=Lax/);
    const pass = setCookie.slice(0, setCookie.indexOf(';'));
    // The stale solution cookie beside the pass: the pass is used, the solution left alone.
    expect((await fetch(url, { headers: { cookie: `${cookie}; ${pass}` } })).status).toBe(200);
    expect((await fetch(url, { headers: { cookie: pass } })).status).toBe(200);
    // Used up: decided as usual, and the browser's pass cookie cleared.
    const over = await fetch(url, { headers: { cookie: pass } });
    expect(over.status).toBe(429);
    expect(over.headers.get('set-cookie')).toMatch(/^sluice_pass=; Path=\/; Max-Age=0/);
    // A replayed solution in a cookie (a stale page's) is not refused: the request is decided as usual.
    expect((await fetch(url, { headers: { cookie } })).status).toBe(429);
    expect(stages).toContain('refused:replayed');
  });

  it('refuses the solution of another key (another client address)', async () => {
    const url = await start({ secret: SECRET }, true);
    const challenge = await challenged(url, { 'x-forwarded-for': '203.0.113.1' });
    const headers = { 'x-forwarded-for': '203.0.113.2', 'Sluice-Solution': solveChallenge(challenge) };
    const other = await fetch(url, { headers });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ refused: 'wrong_key' });
    // The key it was for redeems it.
    const own = { ...headers, 'x-forwarded-for': '203.0.113.1' };
    expect((await fetch(url, { headers: own })).status).toBe(200);
  });
});

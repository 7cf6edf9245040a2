/**
 * Issue 26: `@fastify/websocket` under `@sluice/fastify`, with nothing on the websocket route but `websocket: true`:
 * the plugin leaves its upgrades to `@sluice/websocket` by itself. An upgrade is counted once, by `verifyClient`'s
 * rules, not a second time by the plugin's onRequest hook, and a refused upgrade gets its 429 from
 * `@sluice/websocket`, which closes the socket. (Were the hook to count it, the upgrades would use up the HTTP rule,
 * and a 429 of the hook's, answered before @fastify/websocket's own onRequest hook ran, left the server's end of
 * the socket open for good: `app.close()` never returned. Handshakes and the close must each end within LIMIT_MS.)
 */
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import { MemoryStore } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import { websocketLimit } from '@sluice/websocket';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { connect, expectRefusedHandshake, type Opened, opened } from './clients.js';

const LIMIT_MS = 3_000;

const threePerMinute = (name: string) => ({
  name,
  match: {},
  key: ['ip'],
  limit: { requests: 3, per: '60s' },
});

/** A Fastify app: @sluice/fastify's HTTP rule and @sluice/websocket's upgrade rule, three a minute per IP each. */
async function appWithBoth() {
  const store = new MemoryStore();
  const limits = websocketLimit({
    store,
    rules: { domain: 'ws_upgrades', rules: [threePerMinute('upgrades_per_ip')] },
  });
  const app = Fastify();
  await app.register(rateLimit, {
    store,
    rules: { domain: 'http', rules: [threePerMinute('requests_per_ip')] },
  });
  await app.register(websocket, { options: { verifyClient: limits.verifyClient } });
  app.get('/live', { websocket: true }, (socket, req) => {
    limits.attach(socket, req.raw);
  });
  // The other form: one route, an HTTP handler and a websocket one.
  app.route({
    method: 'GET',
    url: '/both',
    handler: async () => 'http',
    wsHandler: (socket, req) => limits.attach(socket, req.raw),
  });
  app.get('/ping', async () => 'pong');
  app.addHook('onClose', () => limits.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, ws: `ws://${origin}/live`, origin, http: `http://${origin}` };
}

/** The outcome of `what`, or a failure naming the hang when it has none within LIMIT_MS. */
async function settled<T>(what: Promise<T>, name = 'the handshake'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not end within ${LIMIT_MS} ms`)), LIMIT_MS);
  });
  try {
    return await Promise.race([what, hung]);
  } finally {
    clearTimeout(timer);
  }
}

const statusesOf = async (url: string, times: number): Promise<number[]> => {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await fetch(url)).status);
  return statuses;
};

it('counts a @fastify/websocket upgrade once, by verifyClient, with no rateLimit: false on the route', async () => {
  const { app, ws, http } = await appWithBoth();
  try {
    for (let i = 0; i < 3; i++) opened(await settled<Opened>(connect(ws))).ws.close();
    // The fourth is @sluice/websocket's refusal (429, Retry-After, RateLimit fields, its rule), not a hang.
    await settled(expectRefusedHandshake(ws, 'upgrades_per_ip'));
    // The upgrades left the HTTP rule untouched: three requests still pass.
    expect(await statusesOf(`${http}/ping`, 4)).toEqual([200, 200, 200, 429]);
  } finally {
    await settled(app.close(), 'app.close()');
  }
}, 20_000);

it('opens a socket when the HTTP rule is used up: its plain requests are still limited, its upgrades not', async () => {
  const { app, ws, origin, http } = await appWithBoth();
  try {
    expect(await statusesOf(`${http}/ping`, 4)).toEqual([200, 200, 200, 429]);
    // A plain GET of a websocket route (no upgrade) is the plugin's, and refused by the HTTP rule.
    const plain = await fetch(`${http}/live`);
    expect(plain.status).toBe(429);
    expect(await plain.json()).toMatchObject({ rule: 'requests_per_ip' });
    expect((await fetch(`${http}/both`)).status).toBe(429);
    // The upgrades are not: they open, three times (both forms of route), and the fourth gets @sluice/websocket's 429.
    for (const url of [ws, ws, `ws://${origin}/both`]) opened(await settled<Opened>(connect(url))).ws.close();
    await settled(expectRefusedHandshake(`ws://${origin}/both`, 'upgrades_per_ip'));
  } finally {
    await settled(app.close(), 'app.close()');
  }
}, 20_000);

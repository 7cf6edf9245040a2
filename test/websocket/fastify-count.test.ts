/**
 * Issue 26: `@fastify/websocket` under `@sluice/fastify`, set up as the fastify README says (the websocket route
 * `config: { rateLimit: false }`): an upgrade is counted once, by `verifyClient`'s rules, not a second time by the
 * plugin's onRequest hook. Three upgrades leave the HTTP rule untouched (three GETs still pass, a fourth is
 * refused by it), and the fourth upgrade is refused by the upgrade rule. (Without the exclusion the hook counts
 * the upgrades too, and its 429 on a later upgrade goes to Fastify's stand-in response, not the socket: the
 * client hangs. So the exclusion is not optional.)
 */
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import { MemoryStore } from '@sluice/core';
import { rateLimit } from '@sluice/fastify';
import { websocketLimit } from '@sluice/websocket';
import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { connect, expectRefusedHandshake, opened } from './clients.js';

const threePerMinute = (name: string) => ({
  name,
  match: {},
  key: ['ip'],
  limit: { requests: 3, per: '60s' },
});

it('counts a @fastify/websocket upgrade once: by verifyClient, not again by the HTTP hook', async () => {
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
  app.get('/live', { websocket: true, config: { rateLimit: false } }, (socket, req) => {
    limits.attach(socket, req.raw);
  });
  app.get('/ping', async () => 'pong');
  app.addHook('onClose', () => limits.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const url = `ws://127.0.0.1:${port}/live`;
  try {
    for (let i = 0; i < 3; i++) opened(await connect(url)).ws.close();
    await expectRefusedHandshake(url, 'upgrades_per_ip');

    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`http://127.0.0.1:${port}/ping`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  } finally {
    await app.close();
  }
}, 15_000);

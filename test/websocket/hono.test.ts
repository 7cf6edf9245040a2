/**
 * Issue 26: Hono's Node WebSocket helpers, `@hono/node-server` 2's own `upgradeWebSocket` and `@hono/node-ws`,
 * over a real server with the `ws` client, on MemoryStore and on a private Redis: `limits.guardUpgrades` refuses
 * the upgrade over the limit (429 on the handshake, Retry-After, RateLimit fields, JSON body, no socket), a
 * concurrency rule holds a lease per open socket past several lease lifetimes, and `limits.hono(upgradeWebSocket)`
 * limits messages (error frame, close 4029).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { upgradeWebSocket as nodeServerUpgrade, serve } from '@hono/node-server';
import { createNodeWebSocket } from '@hono/node-ws';
import { MemoryStore, type Store } from '@sluice/core';
import { rateLimit } from '@sluice/hono';
import { RedisStore } from '@sluice/redis';
import { CLOSE_RATE_LIMITED, type WebSocketLimit, websocketLimit } from '@sluice/websocket';
import { Hono } from 'hono';
import type { UpgradeWebSocket } from 'hono/ws';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { privateRedis, sleep } from '../long-lived/privateRedis.js';
import { randomPrefix } from '../support/redis.js';
import {
  closed,
  connect,
  connectOnceFree,
  expectRefusedHandshake,
  opened,
  SOCKETS_PER_IP,
  until,
} from './clients.js';

const redisHandle = privateRedis();

function limitsOn(store: Store): WebSocketLimit {
  return websocketLimit({
    store,
    rules: { domain: 'hono_ws_test', rules: [SOCKETS_PER_IP] },
    messages: {
      rules: [
        {
          name: 'messages_per_connection',
          match: { channel: 'chat' },
          key: ['connection'],
          limit: { requests: 2, per: '60s' },
        },
        {
          name: 'bulk_bytes_per_ip',
          match: { channel: 'bulk' },
          key: ['ip'],
          limit: { requests: 100, per: '60s' },
        },
      ],
      describe: (data) => {
        const bulk = data.toString().startsWith('bulk:');
        return { descriptors: { channel: bulk ? 'bulk' : 'chat' }, cost: bulk ? data.toString().length : 1 };
      },
      refuse: { bulk_bytes_per_ip: 'close' },
    },
  });
}

/** An echo route on `/live`, its upgrades and messages limited; `upgradeWebSocket` is the helper under test. */
function echoRoute(app: Hono, limits: WebSocketLimit, upgradeWebSocket: UpgradeWebSocket<WebSocket>): Hono {
  const upgrade = limits.hono(upgradeWebSocket);
  app.get(
    '/live',
    upgrade(() => ({
      onMessage(evt, ws) {
        ws.send(`echo:${String(evt.data)}`);
      },
    })),
  );
  return app;
}

/** @hono/node-server 2: its own upgradeWebSocket, the ws server given to `serve`. */
async function nodeServerApp(limits: WebSocketLimit): Promise<Server> {
  const wss = new WebSocketServer({ noServer: true });
  const app = echoRoute(new Hono(), limits, nodeServerUpgrade as unknown as UpgradeWebSocket<WebSocket>);
  const server = await listening(
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', websocket: { server: wss } }),
  );
  limits.guardUpgrades(server, wss);
  return server;
}

/** @hono/node-ws: createNodeWebSocket, injectWebSocket after serve. */
async function nodeWsApp(limits: WebSocketLimit): Promise<Server> {
  const app = new Hono();
  const nodeWs = createNodeWebSocket({ app });
  echoRoute(app, limits, nodeWs.upgradeWebSocket as unknown as UpgradeWebSocket<WebSocket>);
  const server = await listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }));
  nodeWs.injectWebSocket(server);
  limits.guardUpgrades(server, nodeWs.wss);
  return server;
}

function listening(server: ReturnType<typeof serve>): Promise<Server> {
  const http = server as Server;
  return new Promise((resolve) => {
    if (http.listening) resolve(http);
    else http.once('listening', () => resolve(http));
  });
}

const urlOf = (server: Server) => `ws://127.0.0.1:${(server.address() as AddressInfo).port}/live`;

async function stop(server: Server, limits: WebSocketLimit): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await limits.close();
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('hws') })],
];
const helpers: [string, (limits: WebSocketLimit) => Promise<Server>][] = [
  ['@hono/node-server upgradeWebSocket', nodeServerApp],
  ['@hono/node-ws', nodeWsApp],
];

describe.each(stores)('Hono WebSockets (%s)', (_store, makeStore) => {
  describe.each(helpers)('%s', (_helper, start) => {
    it('refuses a third socket on the handshake (429, Retry-After, RateLimit, JSON) while two stay open past the lease, then admits after a close', async () => {
      const limits = limitsOn(makeStore());
      const server = await start(limits);
      try {
        const a = opened(await connect(urlOf(server)));
        const b = opened(await connect(urlOf(server)));
        await expectRefusedHandshake(urlOf(server), 'sockets_per_ip');

        await sleep(2_600); // past the 2 s lease: the two sockets' leases are renewed, not expired
        await expectRefusedHandshake(urlOf(server), 'sockets_per_ip');

        a.ws.close();
        await closed(a.ws);
        (await connectOnceFree(urlOf(server))).ws.close();
        b.ws.close();
      } finally {
        await stop(server, limits);
      }
    }, 15_000);

    it('limits messages per connection (error frame with the retry time) and closes with 4029 on a bytes rule', async () => {
      const limits = limitsOn(makeStore());
      const server = await start(limits);
      try {
        const { ws, frames } = opened(await connect(urlOf(server)));
        for (const text of ['1', '2', '3']) ws.send(text);
        await until(() => frames.length === 3);
        expect(frames.slice(0, 2)).toEqual(['echo:1', 'echo:2']);
        const refused = JSON.parse(frames[2]!) as { type: string; rule: string; retryAfterMs: number };
        expect(refused).toMatchObject({ type: 'rate_limited', rule: 'messages_per_connection' });
        expect(refused.retryAfterMs).toBeGreaterThan(1_000);
        expect(ws.readyState).toBe(WebSocket.OPEN);

        const end = closed(ws);
        ws.send(`bulk:${'x'.repeat(150)}`);
        const { code, reason } = await end;
        expect(code).toBe(CLOSE_RATE_LIMITED);
        expect(reason).toMatch(/bulk_bytes_per_ip/);
        expect(frames).toHaveLength(3);
      } finally {
        await stop(server, limits);
      }
    });

    it('gives the lease back when the client vanishes, and a path Hono does not serve frees its lease too', async () => {
      const limits = limitsOn(makeStore());
      const server = await start(limits);
      try {
        const a = opened(await connect(urlOf(server)));
        const b = opened(await connect(urlOf(server)));
        a.ws.terminate();
        const c = await connectOnceFree(urlOf(server));
        // Two live; an upgrade to an unknown path is admitted by the limits, refused by Hono (no socket).
        c.ws.close();
        await closed(c.ws);
        const nowhere = await connect(urlOf(server).replace('/live', '/nowhere')).catch(
          (error: Error) => error,
        );
        expect(nowhere instanceof Error || 'refused' in nowhere).toBe(true);
        if (!(nowhere instanceof Error) && 'refused' in nowhere) expect(nowhere.refused.statusCode).toBe(404);
        // Well inside the 2 s lease: only a lease given back lets this one in.
        (await connectOnceFree(urlOf(server), 8)).ws.close();
        b.ws.close();
      } finally {
        await stop(server, limits);
      }
    });
  });
});

it('counts an upgrade once under @sluice/hono when its `skip` leaves upgrades to the WebSocket limits', async () => {
  const store = new MemoryStore();
  const threePerMinute = (name: string) => ({
    name,
    match: {},
    key: ['ip'],
    limit: { requests: 3, per: '60s' },
  });
  const limits = websocketLimit({
    store,
    rules: { domain: 'ws_upgrades', rules: [threePerMinute('upgrades_per_ip')] },
  });
  const app = new Hono();
  app.use(
    rateLimit({
      store,
      rules: { domain: 'http', rules: [threePerMinute('requests_per_ip')] },
      skip: (c) => c.req.header('upgrade')?.toLowerCase() === 'websocket',
    }),
  );
  app.get('/ping', (c) => c.text('pong'));
  echoRoute(app, limits, nodeServerUpgrade as unknown as UpgradeWebSocket<WebSocket>);
  const wss = new WebSocketServer({ noServer: true });
  const server = await listening(
    serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', websocket: { server: wss } }),
  );
  limits.guardUpgrades(server, wss);
  try {
    for (let i = 0; i < 3; i++) opened(await connect(urlOf(server))).ws.close();
    await expectRefusedHandshake(urlOf(server), 'upgrades_per_ip');
    const base = urlOf(server).replace('ws:', 'http:').replace('/live', '/ping');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(base)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  } finally {
    await stop(server, limits);
  }
});

describe('guardUpgrades', () => {
  it('throws a ConfigError on a server with no upgrade listener yet (guarding nothing would admit every upgrade)', async () => {
    const limits = websocketLimit({ rules: { rules: [SOCKETS_PER_IP] } });
    const app = new Hono();
    const server = await listening(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }));
    try {
      expect(() => limits.guardUpgrades(server)).toThrow(/no upgrade listener yet/);
    } finally {
      await stop(server, limits);
    }
  });
});

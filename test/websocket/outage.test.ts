/**
 * Issue 26: a store outage (a private Redis stopped for real) during an upgrade decided by `verifyClient` and
 * during a message. As the README documents: a rule with `on_store_error: deny` answers the handshake 503
 * (`rate_limit_unavailable`, no socket); the default (`allow`) opens the socket failing open, and a message is
 * let through failing open; both reported to the observer as store errors, nothing thrown into the app. Failed
 * renewal rounds are reported too, and close no socket.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoreErrorKind } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { type WebSocketLimit, websocketLimit } from '@sluice/websocket';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { sleep } from '../long-lived/privateRedis.js';
import { randomPrefix, ready, startRedis } from '../support/redis.js';
import { connect, opened, SOCKETS_PER_IP, until } from './clients.js';

/** A ws server whose upgrades `verifyClient` decides; echoes admitted messages. */
async function echoServer(limits: WebSocketLimit): Promise<{ server: Server; url: string }> {
  const server = createServer();
  const wss = new WebSocketServer({ server, verifyClient: limits.verifyClient });
  wss.on('connection', (ws, req) => {
    limits.attach(ws, req);
    ws.on(
      'message',
      limits.onMessage(ws, (data) => ws.send(`echo:${data.toString()}`)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/live` };
}

it('with Redis down, verifyClient answers 503 for a fail-closed rule, opens failing open otherwise, and lets messages through; reported', async () => {
  const redis = await startRedis();
  const client = new Redis({ host: redis.host, port: redis.port, maxRetriesPerRequest: 0 });
  await ready(client);
  const errors: StoreErrorKind[] = [];
  const store = () => new RedisStore({ client, prefix: randomPrefix('wso'), timeoutMs: 200, breaker: false });
  const messages = {
    rules: [
      {
        name: 'messages_per_connection',
        match: {},
        key: ['connection'],
        limit: { requests: 50, per: '60s' },
      },
    ],
  };
  const open = websocketLimit({
    store: store(),
    rules: { domain: 'outage_open', rules: [SOCKETS_PER_IP] },
    messages,
    observer: { onStoreError: (kind) => errors.push(kind) },
  });
  const closedRule = { ...SOCKETS_PER_IP, name: 'sockets_fail_closed', on_store_error: 'deny' } as const;
  const shut = websocketLimit({ store: store(), rules: { domain: 'outage_closed', rules: [closedRule] } });
  const a = await echoServer(open);
  const b = await echoServer(shut);
  try {
    // Before the outage: both admit, a message is echoed.
    const early = opened(await connect(a.url));
    early.ws.send('before');
    await until(() => early.frames.length === 1);
    opened(await connect(b.url)).ws.close();

    await redis.stop();

    const refused = await connect(b.url);
    if (!('refused' in refused)) throw new Error('a fail-closed rule opened a socket during the outage');
    expect(refused.refused.statusCode).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: 'rate_limit_unavailable',
      rule: 'sockets_fail_closed',
    });

    const failingOpen = opened(await connect(a.url));
    failingOpen.ws.send('during');
    early.ws.send('during too');
    await until(() => failingOpen.frames.length === 1 && early.frames.length === 2, 5_000);
    expect(failingOpen.frames).toEqual(['echo:during']);
    expect(early.frames[1]).toBe('echo:during too');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((kind) => kind === 'timeout' || kind === 'error' || kind === 'breaker_open')).toBe(
      true,
    );
    // Renewal rounds (every ~667 ms for the 2 s lease) fail meanwhile: reported, and no socket is closed for it.
    const before = errors.length;
    await sleep(1_500);
    expect(errors.length).toBeGreaterThan(before);
    expect([early.ws.readyState, failingOpen.ws.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
    failingOpen.ws.close();
    early.ws.close();
  } finally {
    for (const { server } of [a, b]) {
      server.closeAllConnections();
      server.close();
    }
    await Promise.all([open.close(), shut.close()]);
    client.disconnect();
  }
}, 20_000);

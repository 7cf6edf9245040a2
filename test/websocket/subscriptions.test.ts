/**
 * Issue 26: subscriptions per connection (`maxSubscriptions`), over a real `ws` server with the `ws` client and a
 * real socket.io server (rooms) with socket.io-client: a connection holds at most N channels, a channel held
 * again is free, leaving one frees its place, and another connection has its own count. Kept in the process (a
 * connection lives in one), so no store is involved.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, MemoryStore } from '@sluice/core';
import { type Subscribed, websocketLimit } from '@sluice/websocket';
import { Server } from 'socket.io';
import { io as connectClient } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { connect, opened, SOCKETS_PER_IP, until } from './clients.js';

function limitsWith(maxSubscriptions: number) {
  return websocketLimit({
    store: new MemoryStore(),
    rules: { domain: 'subs_test', rules: [SOCKETS_PER_IP] },
    maxSubscriptions,
  });
}

describe('subscriptions per connection', () => {
  it('over ws: refuses a third channel, lets one held again through, frees a place on leave', async () => {
    const limits = limitsWith(2);
    const subs = limits.subscriptions!;
    const wss = new WebSocketServer({ noServer: true });
    wss.on('connection', (ws) => {
      ws.on('message', (data) => {
        const [verb, channel = ''] = data.toString().split(':');
        if (verb === 'leave') return void subs.unsubscribe(ws, channel);
        ws.send(JSON.stringify(subs.subscribe(ws, channel)));
      });
    });
    const server = createServer();
    server.on('upgrade', limits.handleUpgrade(wss));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const { ws, frames } = opened(await connect(url));
      for (const m of ['join:a', 'join:b', 'join:c', 'join:a', 'leave:b', 'join:c']) ws.send(m);
      await until(() => frames.length === 5);
      const answers = frames.map((f) => JSON.parse(f) as Subscribed);
      expect(answers).toEqual([
        { ok: true, count: 1 },
        { ok: true, count: 2 },
        { ok: false, type: 'subscription_limit', channel: 'c', limit: 2 },
        { ok: true, count: 2 },
        { ok: true, count: 2 },
      ]);
      const other = opened(await connect(url));
      other.ws.send('join:c');
      await until(() => other.frames.length === 1);
      expect(JSON.parse(other.frames[0]!)).toEqual({ ok: true, count: 1 });
      ws.close();
      other.ws.close();
    } finally {
      server.closeAllConnections();
      server.close();
      wss.close();
      await limits.close();
    }
  });

  it('over socket.io: a room joined only when the connection is under its maximum', async () => {
    const limits = limitsWith(1);
    const subs = limits.subscriptions!;
    const http = createServer();
    const io = new Server(http);
    io.use(limits.socketIo.handshake);
    io.on('connection', (socket) => {
      socket.on('join', (room: string, ack: (answer: Subscribed) => void) => {
        const answer = subs.subscribe(socket, room);
        if (answer.ok) void socket.join(room);
        ack(answer);
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const client = connectClient(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, {
      transports: ['websocket'],
      reconnection: false,
    });
    try {
      expect(await client.emitWithAck('join', 'news')).toEqual({ ok: true, count: 1 });
      expect(await client.emitWithAck('join', 'sport')).toEqual({
        ok: false,
        type: 'subscription_limit',
        channel: 'sport',
        limit: 1,
      });
      const [server] = await io.fetchSockets();
      expect([...(server?.rooms ?? [])].filter((room) => room !== server?.id)).toEqual(['news']);
    } finally {
      client.close();
      await io.close();
      await limits.close();
    }
  });

  it('refuses a maxSubscriptions that is not a positive integer at start-up', () => {
    expect(() => limitsWith(0)).toThrow(ConfigError);
    expect(() => limitsWith(1.5)).toThrow(/maxSubscriptions must be a positive integer/);
  });
});

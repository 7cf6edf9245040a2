/**
 * Issue 26: socket.io middleware over a real socket.io server, with socket.io-client, on MemoryStore and on a
 * private Redis: `io.use(limits.socketIo.handshake)` refuses a connection over the limit (the client's
 * connect_error carries the rule and the retry time) and holds a lease per connected socket;
 * `socket.use(limits.socketIo.events(socket))` refuses an event over the limit with its ack, or a `rate_limited`
 * event, carrying the retry time.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import {
  type HandshakeRefusal,
  RATE_LIMITED_EVENT,
  type RefusedEvent,
  websocketLimit,
} from '@sluice/websocket';
import { Server } from 'socket.io';
import { type Socket as ClientSocket, io as connectClient } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { privateRedis, sleep } from '../long-lived/privateRedis.js';
import { randomPrefix } from '../support/redis.js';
import { SOCKETS_PER_IP } from './clients.js';

const redisHandle = privateRedis();

async function socketIoServer(store: Store): Promise<{ url: string; stop: () => Promise<void> }> {
  const limits = websocketLimit({
    store,
    rules: {
      domain: 'socketio_test',
      rules: [SOCKETS_PER_IP],
    },
    messages: {
      rules: [
        {
          name: 'chat_per_connection',
          match: { event: 'chat' },
          key: ['connection'],
          limit: { requests: 2, per: '60s' },
        },
      ],
    },
  });
  const http = createServer();
  const io = new Server(http);
  io.use(limits.socketIo.handshake);
  io.on('connection', (socket) => {
    socket.use(limits.socketIo.events(socket));
    socket.on('chat', (text: string, ack?: (reply: unknown) => void) => {
      if (ack) ack(`echo:${text}`);
      else socket.emit('echo', text);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    stop: async () => {
      await io.close();
      await limits.close();
    },
  };
}

type Connected = { socket: ClientSocket } | { refused: Error & { data?: HandshakeRefusal } };

function connect(url: string, transports: ('websocket' | 'polling')[] = ['websocket']): Promise<Connected> {
  return new Promise((resolve) => {
    const socket = connectClient(url, { transports, reconnection: false, forceNew: true });
    socket.once('connect', () => resolve({ socket }));
    socket.once('connect_error', (error) => {
      socket.close();
      resolve({ refused: error });
    });
  });
}

function connected(c: Connected): ClientSocket {
  if ('refused' in c) throw new Error(`refused: ${c.refused.message}`);
  return c.socket;
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('sio') })],
];

describe.each(stores)('socket.io middleware (%s)', (_name, makeStore) => {
  it('refuses a third connection with a connect_error carrying the rule and retry time, admits one after a disconnect', async () => {
    const server = await socketIoServer(makeStore());
    try {
      const a = connected(await connect(server.url));
      const b = connected(await connect(server.url));
      const third = await connect(server.url);
      if (!('refused' in third)) throw new Error('a third connection was admitted');
      expect(third.refused.message).toBe('rate limited');
      expect(third.refused.data).toMatchObject({
        error: 'rate_limited',
        status: 429,
        rule: 'sockets_per_ip',
      });
      expect(third.refused.data?.retryAfterMs).toBeGreaterThan(0);

      await sleep(2_600); // past the lease: the two connections still hold theirs
      expect('refused' in (await connect(server.url))).toBe(true);

      a.disconnect();
      let next: Connected = await connect(server.url);
      for (let i = 0; i < 40 && 'refused' in next; i++) {
        await sleep(50);
        next = await connect(server.url);
      }
      connected(next).disconnect();
      b.disconnect();
    } finally {
      await server.stop();
    }
  }, 15_000);

  it('limits a handshake over HTTP long-polling the same way (the address taken from the handshake)', async () => {
    const server = await socketIoServer(makeStore());
    try {
      const a = connected(await connect(server.url, ['polling']));
      const b = connected(await connect(server.url, ['polling']));
      const third = await connect(server.url, ['polling']);
      if (!('refused' in third)) throw new Error('a third connection was admitted');
      expect(third.refused.data).toMatchObject({ error: 'rate_limited', rule: 'sockets_per_ip' });
      a.disconnect();
      b.disconnect();
    } finally {
      await server.stop();
    }
  });

  it('answers an event over the limit through its ack, or with a rate_limited event, carrying the retry time', async () => {
    const server = await socketIoServer(makeStore());
    try {
      const socket = connected(await connect(server.url));
      expect(await socket.emitWithAck('chat', 'one')).toBe('echo:one');
      expect(await socket.emitWithAck('chat', 'two')).toBe('echo:two');
      const refused = (await socket.emitWithAck('chat', 'three')) as RefusedEvent;
      expect(refused).toMatchObject({ type: 'rate_limited', event: 'chat', rule: 'chat_per_connection' });
      expect(refused.retryAfterMs).toBeGreaterThan(1_000);

      const event = new Promise<RefusedEvent>((resolve) => socket.once(RATE_LIMITED_EVENT, resolve));
      const echoes: string[] = [];
      socket.on('echo', (text: string) => echoes.push(text));
      socket.emit('chat', 'four');
      expect(await event).toMatchObject({ event: 'chat', rule: 'chat_per_connection' });
      expect(echoes).toEqual([]);
      expect(socket.connected).toBe(true);

      // Another connection has its own count.
      const other = connected(await connect(server.url));
      expect(await other.emitWithAck('chat', 'x')).toBe('echo:x');
      other.disconnect();
      socket.disconnect();
    } finally {
      await server.stop();
    }
  });
});

/**
 * Issue 26: `@fastify/websocket` over a real Fastify server, with the `ws` client, on MemoryStore and on a private
 * Redis: `verifyClient` refuses the upgrade over the limit (429 on the handshake, Retry-After, RateLimit fields, no
 * socket), a concurrency rule holds a lease per open socket, and messages are limited per connection.
 */
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import { MemoryStore, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { websocketLimit } from '@sluice/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { privateRedis, sleep } from '../long-lived/privateRedis.js';
import { randomPrefix } from '../support/redis.js';
import { closed, connect, connectOnceFree, opened, SOCKETS_PER_IP, until } from './clients.js';

const redisHandle = privateRedis();

async function fastifyServer(store: Store): Promise<{ app: FastifyInstance; url: string }> {
  const limits = websocketLimit({
    store,
    rules: {
      domain: 'fastify_ws_test',
      rules: [SOCKETS_PER_IP],
    },
    messages: {
      rules: [
        {
          name: 'messages_per_connection',
          match: {},
          key: ['connection'],
          limit: { requests: 2, per: '60s' },
        },
      ],
    },
  });
  const app = Fastify();
  await app.register(websocket, { options: { verifyClient: limits.verifyClient } });
  app.get('/live', { websocket: true }, (socket, req) => {
    limits.attach(socket, req.raw);
    socket.on(
      'message',
      limits.onMessage(socket, (data) => socket.send(`echo:${data.toString()}`)),
    );
  });
  app.addHook('onClose', () => limits.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/live` };
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('fws') })],
];

describe.each(stores)('@fastify/websocket (%s)', (_name, makeStore) => {
  it('refuses a third socket on the handshake with a 429 while two stay open, past a lease lifetime, then admits after a close', async () => {
    const { app, url } = await fastifyServer(makeStore());
    try {
      const a = opened(await connect(url));
      const b = opened(await connect(url));
      const third = await connect(url);
      if (!('refused' in third)) throw new Error('a third socket was opened');
      expect(third.refused.statusCode).toBe(429);
      expect(Number(third.refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(third.refused.headers.ratelimit ?? third.refused.headers['ratelimit-policy']).toBeDefined();
      expect(third.refused.headers['content-type']).toBe('application/json');
      expect(JSON.parse(third.body)).toMatchObject({ error: 'rate_limited', rule: 'sockets_per_ip' });

      await sleep(2_600);
      const late = await connect(url);
      expect('refused' in late && late.refused.statusCode).toBe(429);

      a.ws.close();
      await closed(a.ws);
      (await connectOnceFree(url)).ws.close();
      b.ws.close();
    } finally {
      await app.close();
    }
  }, 15_000);

  it('refuses a message over the per-connection limit with an error frame carrying the retry time', async () => {
    const { app, url } = await fastifyServer(makeStore());
    try {
      const { ws, frames } = opened(await connect(url));
      for (const text of ['1', '2', '3']) ws.send(text);
      await until(() => frames.length === 3);
      expect(frames.slice(0, 2)).toEqual(['echo:1', 'echo:2']);
      expect(JSON.parse(frames[2]!)).toMatchObject({ type: 'rate_limited', rule: 'messages_per_connection' });
      expect((JSON.parse(frames[2]!) as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(1_000);
      expect(ws.readyState).toBe(WebSocket.OPEN);
      ws.close();
    } finally {
      await app.close();
    }
  });

  it('gives the lease back when the client vanishes (socket destroyed without a close frame)', async () => {
    const { app, url } = await fastifyServer(makeStore());
    try {
      const a = opened(await connect(url));
      const b = opened(await connect(url));
      a.ws.terminate();
      (await connectOnceFree(url)).ws.close();
      b.ws.close();
    } finally {
      await app.close();
    }
  });
});

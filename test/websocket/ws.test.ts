/**
 * Issue 26, part 2: WebSockets on `ws` over a plain Node server (`server.on('upgrade')`), with the real `ws`
 * client, on MemoryStore and on a private Redis: the upgrade limited like a request (429 on the handshake, no
 * socket), connections per key held for the socket's life (past several lease lifetimes), messages per
 * connection (error frame with the retry time) and by bytes (close code 4029), a maximum connection duration.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import {
  CLOSE_MAX_DURATION,
  CLOSE_RATE_LIMITED,
  type WebSocketLimitOptions,
  websocketLimit,
} from '@sluice/websocket';
import { describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { privateRedis, sleep } from '../long-lived/privateRedis.js';
import { randomPrefix } from '../support/redis.js';
import { closed, connect, type Opened, opened, SOCKETS_PER_IP, until } from './clients.js';

const redisHandle = privateRedis();

function options(store: Store): WebSocketLimitOptions {
  return {
    store,
    rules: {
      domain: 'ws_test',
      rules: [SOCKETS_PER_IP],
    },
    messages: {
      rules: [
        {
          name: 'messages_per_connection',
          match: { channel: 'chat' },
          key: ['connection'],
          limit: { requests: 3, per: '60s' },
        },
        {
          name: 'bulk_bytes_per_ip',
          match: { channel: 'bulk' },
          key: ['ip'],
          limit: { requests: 100, per: '60s' },
        },
      ],
      describe: (data) => {
        const text = data.toString();
        return {
          descriptors: { channel: text.startsWith('bulk:') ? 'bulk' : 'chat' },
          cost: text.startsWith('bulk:') ? Buffer.byteLength(text) : 1,
        };
      },
      refuse: { bulk_bytes_per_ip: 'close' },
    },
  };
}

/** An echo server on a plain Node HTTP server, its upgrades and messages limited. */
async function echoServer(opts: WebSocketLimitOptions): Promise<{ server: Server; url: string }> {
  const limits = websocketLimit(opts);
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => {
    ws.on(
      'message',
      limits.onMessage(ws, (data) => ws.send(`echo:${data.toString()}`)),
    );
  });
  const server = createServer((_req, res) => res.end());
  server.on('upgrade', limits.handleUpgrade(wss));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.on('close', () => {
    wss.close();
    void limits.close();
  });
  return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/live` };
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('ws') })],
];

describe.each(stores)('WebSockets on ws (%s)', (_name, makeStore) => {
  it('refuses a third socket on the handshake (429, Retry-After, RateLimit) while two stay open, past several lease lifetimes', async () => {
    const { server, url } = await echoServer(options(makeStore()));
    try {
      const a = opened(await connect(url));
      const b = opened(await connect(url));
      const third = await connect(url);
      if (!('refused' in third)) throw new Error('a third socket was opened');
      expect(third.refused.statusCode).toBe(429);
      expect(Number(third.refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(third.refused.headers.ratelimit ?? third.refused.headers['ratelimit-policy']).toBeDefined();
      expect(JSON.parse(third.body)).toMatchObject({ error: 'rate_limited', rule: 'sockets_per_ip' });

      await sleep(3_500);
      const late = await connect(url);
      expect('refused' in late && late.refused.statusCode).toBe(429);

      a.ws.close();
      await closed(a.ws);
      let after: Opened | undefined;
      await until(() => after !== undefined && !('refused' in after), 2_000).catch(() => {});
      for (let i = 0; i < 20 && (after === undefined || 'refused' in after); i++) {
        after = await connect(url);
        if ('refused' in after) await sleep(50);
      }
      opened(after!).ws.close();
      b.ws.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 15_000);

  it('refuses a message over the per-connection limit with an error frame carrying the retry time', async () => {
    const { server, url } = await echoServer(options(makeStore()));
    try {
      const { ws, frames } = opened(await connect(url));
      for (const text of ['1', '2', '3', '4']) ws.send(text);
      await until(() => frames.length === 4);
      expect(frames.slice(0, 3)).toEqual(['echo:1', 'echo:2', 'echo:3']);
      const refused = JSON.parse(frames[3]!) as { type: string; rule: string; retryAfterMs: number };
      expect(refused.type).toBe('rate_limited');
      expect(refused.rule).toBe('messages_per_connection');
      expect(refused.retryAfterMs).toBeGreaterThan(1_000);
      expect(ws.readyState).toBe(WebSocket.OPEN);
      // Another connection has its own count.
      const other = opened(await connect(url));
      other.ws.send('x');
      await until(() => other.frames.length === 1);
      expect(other.frames[0]).toBe('echo:x');
      ws.close();
      other.ws.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('closes with 4029 a connection whose message is over a rule refusing by close (bytes per key)', async () => {
    const { server, url } = await echoServer(options(makeStore()));
    try {
      const { ws, frames } = opened(await connect(url));
      const end = closed(ws);
      ws.send(`bulk:${'x'.repeat(150)}`);
      const { code, reason } = await end;
      expect(code).toBe(CLOSE_RATE_LIMITED);
      expect(reason).toMatch(/bulk_bytes_per_ip; retry after never/);
      expect(frames).toEqual([]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('closes a connection at maxDurationMs (4030) and gives its lease back', async () => {
    const { server, url } = await echoServer({ ...options(makeStore()), maxDurationMs: 300 });
    try {
      const a = opened(await connect(url));
      const b = opened(await connect(url));
      const [ca, cb] = await Promise.all([closed(a.ws), closed(b.ws)]);
      expect([ca.code, cb.code]).toEqual([CLOSE_MAX_DURATION, CLOSE_MAX_DURATION]);
      await sleep(100);
      opened(await connect(url)).ws.close();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

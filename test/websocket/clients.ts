/** The `ws` client as the WebSocket tests use it: an open socket (frames collected) or the refused handshake. */
import type { IncomingMessage } from 'node:http';
import { expect } from 'vitest';
import { WebSocket } from 'ws';
import { sleep } from '../long-lived/privateRedis.js';

export type Opened = { ws: WebSocket; frames: string[] } | { refused: IncomingMessage; body: string };

/** Connects with the `ws` client: the open socket (its frames collected) or the refused handshake's response. */
export function connect(url: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const frames: string[] = [];
    ws.on('message', (data) => frames.push(data.toString()));
    ws.once('open', () => resolve({ ws, frames }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ refused: res, body }));
    });
    ws.once('error', (error) => reject(error));
  });
}

export function opened(o: Opened): { ws: WebSocket; frames: string[] } {
  if ('refused' in o) throw new Error(`refused with ${o.refused.statusCode}: ${o.body}`);
  return o;
}

export const closed = (ws: WebSocket) =>
  new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );

export async function until(what: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(20);
  }
}

/** Tries to connect until admitted (a released lease reaches the store a moment after the close). */
export async function connectOnceFree(url: string, tries = 40): Promise<{ ws: WebSocket; frames: string[] }> {
  for (let i = 0; i < tries - 1; i++) {
    const attempt = await connect(url);
    if (!('refused' in attempt)) return attempt;
    await sleep(50);
  }
  return opened(await connect(url));
}

/** The connection rule the WebSocket tests share: two sockets per address, leases of 2 s (renewed while open). */
export const SOCKETS_PER_IP = {
  name: 'sockets_per_ip',
  match: {},
  key: ['ip'],
  algorithm: 'concurrency',
  limit: { concurrent: 2, lease: '2s' },
} as const;

/** Two `chat` events per connection (socket.io, NestJS gateways: the event is a descriptor). */
export const CHAT_PER_CONNECTION = {
  name: 'chat_per_connection',
  match: { event: 'chat' },
  key: ['connection'],
  limit: { requests: 2, per: '60s' },
} as const;

/** Connects and expects the handshake refused like a request: 429, Retry-After, RateLimit fields, JSON naming `rule`. */
export async function expectRefusedHandshake(url: string, rule: string): Promise<void> {
  const attempt = await connect(url);
  if (!('refused' in attempt)) {
    attempt.ws.close();
    throw new Error('the socket was opened');
  }
  expect(attempt.refused.statusCode).toBe(429);
  expect(Number(attempt.refused.headers['retry-after'])).toBeGreaterThan(0);
  expect(attempt.refused.headers.ratelimit ?? attempt.refused.headers['ratelimit-policy']).toBeDefined();
  expect(JSON.parse(attempt.body)).toMatchObject({ error: 'rate_limited', rule });
}

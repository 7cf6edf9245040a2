/**
 * Issue 26: NestJS gateways, on @nestjs/platform-ws (the `ws` client) and @nestjs/platform-socket.io
 * (socket.io-client), MemoryStore and a private Redis. `SluiceWsService.limitGateway(server)` in `afterInit`
 * limits connections (ws: 429 on the handshake with Retry-After and RateLimit fields, no socket; socket.io: a
 * `connect_error` carrying the rule and retry time), held for the socket's life past several lease lifetimes;
 * `@UseGuards(SluiceWsGuard)` limits messages (Nest's `exception` answer carrying the refusal; a `close` rule ends
 * the connection with 4029).
 */
import type { AddressInfo } from 'node:net';
import {
  type INestApplication,
  Inject,
  Module,
  type Type,
  UseGuards,
  type WebSocketAdapter,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { WsAdapter } from '@nestjs/platform-ws';
import { type OnGatewayInit, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { MemoryStore, type Store } from '@sluice/core';
import { RedisStore } from '@sluice/redis';
import { CLOSE_RATE_LIMITED, type SocketIoServer, type WebSocketLimitOptions } from '@sluice/websocket';
import { type Socket as ClientSocket, io } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { WebSocket, type WebSocketServer } from 'ws';
import { SluiceWsGuard, SluiceWsModule, SluiceWsService } from '../../packages/nestjs/src/websocket/index.js';
import { privateRedis, sleep } from '../long-lived/privateRedis.js';
import { randomPrefix } from '../support/redis.js';
import {
  CHAT_PER_CONNECTION,
  closed,
  connect,
  connectOnceFree,
  expectRefusedHandshake,
  opened,
  SOCKETS_PER_IP,
  until,
} from '../websocket/clients.js';

const redisHandle = privateRedis();

function options(store: Store): WebSocketLimitOptions {
  return {
    store,
    rules: { domain: 'nest_ws_test', rules: [SOCKETS_PER_IP] },
    messages: {
      rules: [
        CHAT_PER_CONNECTION,
        { name: 'shout_per_ip', match: { event: 'shout' }, key: ['ip'], limit: { requests: 1, per: '60s' } },
      ],
      refuse: { shout_per_ip: 'close' },
    },
  };
}

/** The gateway under test: echoes `chat` and `shout`; its connections and messages limited. */
function gatewayClass(gatewayOptions: Record<string, unknown>): Type {
  class ChatGateway implements OnGatewayInit {
    readonly #sluice: SluiceWsService;
    constructor(sluice: SluiceWsService) {
      this.#sluice = sluice;
    }
    afterInit(server: WebSocketServer | SocketIoServer): void {
      this.#sluice.limitGateway(server);
    }
    chat(_client: unknown, data: unknown) {
      return { event: 'echo', data };
    }
    shout(_client: unknown, data: unknown) {
      return { event: 'echo', data };
    }
  }
  Inject(SluiceWsService)(ChatGateway, undefined, 0);
  for (const name of ['chat', 'shout']) {
    const proto = ChatGateway.prototype as object;
    const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
    Reflect.decorate([SubscribeMessage(name)], proto, name, descriptor);
  }
  Reflect.decorate([WebSocketGateway(gatewayOptions), UseGuards(SluiceWsGuard)], ChatGateway);
  return ChatGateway;
}

async function nestApp(
  store: Store,
  adapter: (app: INestApplication) => WebSocketAdapter,
  gatewayOptions: Record<string, unknown>,
): Promise<{ app: INestApplication; port: number }> {
  class AppModule {}
  Module({ imports: [SluiceWsModule.forRoot(options(store))], providers: [gatewayClass(gatewayOptions)] })(
    AppModule,
  );
  const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false });
  app.useWebSocketAdapter(adapter(app));
  await app.listen(0, '127.0.0.1');
  return { app, port: (app.getHttpServer().address() as AddressInfo).port };
}

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redisHandle.client, prefix: randomPrefix('nws') })],
];

describe.each(stores)('NestJS gateway on @nestjs/platform-ws (%s)', (_name, makeStore) => {
  const start = () => nestApp(makeStore(), (app) => new WsAdapter(app), { path: '/live' });

  it('refuses a third socket on the handshake (429, Retry-After, RateLimit) while two stay open past the lease, admits after a close', async () => {
    const { app, port } = await start();
    const url = `ws://127.0.0.1:${port}/live`;
    try {
      const a = opened(await connect(url));
      const b = opened(await connect(url));
      await expectRefusedHandshake(url, 'sockets_per_ip');
      await sleep(2_600);
      await expectRefusedHandshake(url, 'sockets_per_ip');
      a.ws.terminate();
      (await connectOnceFree(url, 8)).ws.close();
      b.ws.close();
    } finally {
      await app.close();
    }
  }, 15_000);

  it('refuses a chat message over the per-connection rule with an exception frame; a close rule ends the socket with 4029', async () => {
    const { app, port } = await start();
    try {
      const { ws, frames } = opened(await connect(`ws://127.0.0.1:${port}/live`));
      for (const data of ['1', '2', '3']) ws.send(JSON.stringify({ event: 'chat', data }));
      await until(() => frames.length === 3);
      const answers = frames.map((frame) => JSON.parse(frame) as { event: string; data: unknown });
      expect(answers.filter((answer) => answer.event === 'echo').map((answer) => answer.data)).toEqual([
        '1',
        '2',
      ]);
      const refused = answers.find((answer) => answer.event === 'exception')?.data as Record<string, unknown>;
      expect(refused).toMatchObject({ type: 'rate_limited', event: 'chat', rule: 'chat_per_connection' });
      expect(refused.retryAfterMs).toBeGreaterThan(1_000);
      expect(ws.readyState).toBe(WebSocket.OPEN);

      ws.send(JSON.stringify({ event: 'shout', data: 'a' }));
      await until(() => frames.length === 4);
      const end = closed(ws);
      ws.send(JSON.stringify({ event: 'shout', data: 'b' }));
      const { code, reason } = await end;
      expect(code).toBe(CLOSE_RATE_LIMITED);
      expect(reason).toMatch(/shout_per_ip/);
      expect(JSON.parse(frames[3]!)).toEqual({ event: 'echo', data: 'a' });
    } finally {
      await app.close();
    }
  });
});

/** A socket.io client connected, or the `connect_error` it got. */
function ioConnect(port: number): Promise<{ socket: ClientSocket } | { error: Error & { data?: unknown } }> {
  const socket = io(`http://127.0.0.1:${port}`, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve) => {
    socket.once('connect', () => resolve({ socket }));
    socket.once('connect_error', (error) => {
      socket.close();
      resolve({ error });
    });
  });
}

function ioOpened(o: Awaited<ReturnType<typeof ioConnect>>): ClientSocket {
  if ('error' in o) throw o.error;
  return o.socket;
}

describe.each(stores)('NestJS gateway on @nestjs/platform-socket.io (%s)', (_name, makeStore) => {
  const start = () => nestApp(makeStore(), (app) => new IoAdapter(app), {});

  it('refuses a third connection with a connect_error carrying the rule and retry time, past the lease', async () => {
    const { app, port } = await start();
    try {
      const a = ioOpened(await ioConnect(port));
      const b = ioOpened(await ioConnect(port));
      await sleep(2_600);
      const third = await ioConnect(port);
      if (!('error' in third)) throw new Error('a third connection was admitted');
      expect(third.error.message).toBe('rate limited');
      expect(third.error.data).toMatchObject({ status: 429, rule: 'sockets_per_ip' });
      a.close();
      let after: Awaited<ReturnType<typeof ioConnect>> | undefined;
      for (let i = 0; i < 8 && (after === undefined || 'error' in after); i++) {
        if (after !== undefined) await sleep(50);
        after = await ioConnect(port);
      }
      ioOpened(after!).close();
      b.close();
    } finally {
      await app.close();
    }
  }, 15_000);

  it('answers a chat event over the rule with an exception event; the handler does not run', async () => {
    const { app, port } = await start();
    try {
      const socket = ioOpened(await ioConnect(port));
      const exceptions: unknown[] = [];
      const echoes: unknown[] = [];
      socket.on('exception', (payload) => exceptions.push(payload));
      // A handler's `{event, data}` is emitted as that event (Nest's IoAdapter).
      socket.on('echo', (data) => echoes.push(data));
      for (const data of ['1', '2', '3']) socket.emit('chat', data);
      await until(() => echoes.length + exceptions.length === 3);
      await sleep(100);
      expect(echoes).toEqual(['1', '2']);
      expect(exceptions).toHaveLength(1);
      expect(exceptions[0]).toMatchObject({
        type: 'rate_limited',
        event: 'chat',
        rule: 'chat_per_connection',
      });
      expect((exceptions[0] as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(1_000);
      expect(socket.connected).toBe(true);
      socket.close();
    } finally {
      await app.close();
    }
  });
});

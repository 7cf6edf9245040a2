import { type DynamicModule, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import {
  type SocketIoServer,
  type WebSocketLimit,
  type WebSocketLimitOptions,
  websocketLimit,
} from '@sluice/websocket';
import type { WebSocketServer } from 'ws';

/** Injection token of the options given to `SluiceWsModule.forRoot`. */
export const SLUICE_WS_OPTIONS = Symbol.for('sluice.nestjs.websocket.options');

/**
 * The WebSocket limits of a Nest application (one `websocketLimit` of @sluice/websocket), closed when the
 * application shuts down. A gateway calls `limitGateway(server)` in `afterInit`; `SluiceWsGuard` reads it.
 */
export class SluiceWsService implements OnApplicationShutdown {
  readonly limits: WebSocketLimit;

  constructor(options: WebSocketLimitOptions) {
    this.limits = websocketLimit(options);
  }

  /**
   * Connections of a gateway: a `ws` server (@nestjs/platform-ws) has its upgrades decided (429 on the
   * handshake) and each socket's leases held while it is open; a socket.io server or namespace
   * (@nestjs/platform-socket.io) gets the handshake middleware (`connect_error` with the retry time).
   */
  limitGateway(server: WebSocketServer | SocketIoServer): void {
    this.limits.limitServer(server);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.limits.close();
  }
}

/** WebSocket limits for gateways: `SluiceWsModule.forRoot({rules, messages, store})`, global. */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot is its convention.
export class SluiceWsModule {
  /** The options of @sluice/websocket's `websocketLimit`: `rules` decide connections, `messages.rules` messages. */
  static forRoot(options: WebSocketLimitOptions = {}): DynamicModule {
    return {
      module: SluiceWsModule,
      global: true,
      providers: [{ provide: SLUICE_WS_OPTIONS, useValue: options }, SluiceWsService],
      exports: [SLUICE_WS_OPTIONS, SluiceWsService],
    };
  }
}

// Decorators applied as calls: this package compiles without experimentalDecorators or emitted metadata.
Injectable()(SluiceWsService);
Inject(SLUICE_WS_OPTIONS)(SluiceWsService, undefined, 0);
Module({})(SluiceWsModule);

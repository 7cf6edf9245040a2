import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { WsException } from '@nestjs/websockets';
import type { SocketIoSocket } from '@sluice/websocket';
import type { WebSocket } from 'ws';
import { SLUICE_WS_OPTIONS, SluiceWsService } from './module.js';

type Options = ConstructorParameters<typeof SluiceWsService>[0];

/**
 * Decides every message a gateway handles (`@UseGuards(SluiceWsGuard)`) against `messages.rules`, with the
 * descriptors `event` (the message's pattern), `connection`, `ip`, `path` (or `messages.describeEvent`). Over
 * a limit the handler does not run and Nest's `exception` answer carries `{type: 'rate_limited', event, rule,
 * retryAfterMs}`; a rule refusing by `close` also closes the connection. Other contexts pass untouched.
 */
export class SluiceWsGuard implements CanActivate {
  readonly #sluice: SluiceWsService;
  readonly #describe: NonNullable<Options['messages']>['describeEvent'];

  constructor(sluice: SluiceWsService, options: Options) {
    this.#sluice = sluice;
    this.#describe = options.messages?.describeEvent;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'ws') return true;
    const ws = context.switchToWs();
    const event = ws.getPattern();
    const facts = this.#describe?.(event, [ws.getData()]) ?? { descriptors: { event } };
    const refused = await this.#sluice.limits.checkMessage(
      ws.getClient<WebSocket | SocketIoSocket>(),
      event,
      facts,
    );
    // Nest's exception filter answers it: an `exception` event (socket.io) or frame (ws) carrying the refusal.
    if (refused !== undefined) throw new WsException(refused);
    return true;
  }
}

Injectable()(SluiceWsGuard);
Inject(SluiceWsService)(SluiceWsGuard, undefined, 0);
Inject(SLUICE_WS_OPTIONS)(SluiceWsGuard, undefined, 1);

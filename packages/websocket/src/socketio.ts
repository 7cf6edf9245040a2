import type { IncomingMessage } from 'node:http';
import type { Decision } from '@sluice/core';
import type { DeniedResponse, Verdict } from '@sluice/core/http';
import { decideMessage, type MessageFacts, type MessageGate, retryMs } from './messages.js';

/**
 * What the middleware needs of a socket.io server socket, so this package does not depend on socket.io:
 * `Socket` from socket.io 4 has all of it.
 */
export interface SocketIoSocket {
  readonly request: IncomingMessage;
  readonly handshake: { readonly address: string };
  once(event: 'disconnect', listener: () => void): unknown;
  emit(event: string, ...args: unknown[]): unknown;
  disconnect(close?: boolean): unknown;
}

/** The error a refused socket.io handshake hands `next`: the client's `connect_error` has its message and `data`. */
export class HandshakeRefusedError extends Error {
  readonly code = 'SLUICE_HANDSHAKE_REFUSED';
  readonly data: HandshakeRefusal;
  constructor(data: HandshakeRefusal) {
    super(data.error === 'rate_limited' ? 'rate limited' : data.error);
    this.name = 'HandshakeRefusedError';
    this.data = data;
  }
}

/** `connect_error`'s `data` on the client. */
export interface HandshakeRefusal {
  readonly error: 'rate_limited' | 'rate_limit_unavailable' | 'forbidden';
  readonly status: number;
  readonly rule: string | null;
  /** ms until a connection would be admitted; null when never. */
  readonly retryAfterMs: number | null;
}

/** What an event over a limit gets: its ack called with this, or else a `rate_limited` event carrying it. */
export interface RefusedEvent {
  readonly type: 'rate_limited';
  readonly event: string;
  readonly rule: string | null;
  readonly retryAfterMs: number | null;
}

/** The event name a refused event without an ack is answered with. */
export const RATE_LIMITED_EVENT = 'rate_limited';

/** socket.io middleware: `io.use(handshake)`, then `socket.use(events(socket))` in `io.on('connection')`. */
export interface SocketIoLimit {
  readonly handshake: (socket: SocketIoSocket, next: (error?: Error) => void) => void;
  events(socket: SocketIoSocket): (packet: unknown[], next: (error?: Error) => void) => void;
}

/** What the socket.io middleware borrows from the WebSocket limits. */
export interface SocketIoParts {
  check(req: IncomingMessage, ip: string | undefined): Verdict | Promise<Verdict>;
  gateFor(req: IncomingMessage, facts: { readonly ip: string | undefined }): MessageGate | undefined;
  describeEvent: ((event: string, args: readonly unknown[]) => MessageFacts) | undefined;
  report(error: unknown): void;
  maxDurationMs: number | undefined;
}

const GATES = new WeakMap<SocketIoSocket, MessageGate>();

/** The message gate of a socket the handshake middleware admitted. */
export const gateOf = (socket: SocketIoSocket): MessageGate | undefined => GATES.get(socket);

/** What a refused event (or a gateway's refused message) is answered with. */
export const refusedEvent = (event: string, decision: Decision): RefusedEvent => ({
  type: 'rate_limited',
  event,
  rule: decision.rule ?? null,
  retryAfterMs: retryMs(decision.retryAfterMs),
});

export function socketIoLimit(parts: SocketIoParts): SocketIoLimit {
  async function admit(socket: SocketIoSocket): Promise<Error | undefined> {
    const ip = socket.handshake.address || undefined;
    try {
      const verdict = await parts.check(socket.request, ip);
      if (verdict.action === 'deny') return refusedHandshake(verdict.denied);
      if (verdict.action === 'skip') return undefined;
      const gate = parts.gateFor(socket.request, { ip });
      if (gate !== undefined) GATES.set(socket, gate);
      holdForLife(socket, verdict, parts.maxDurationMs);
      return undefined;
    } catch (error) {
      parts.report(error);
      return new HandshakeRefusedError({
        error: 'rate_limit_unavailable',
        status: 503,
        rule: null,
        retryAfterMs: null,
      });
    }
  }

  return {
    handshake: (socket, next) => {
      void admit(socket).then(next);
    },
    events: (socket) => (packet, next) => {
      const gate = GATES.get(socket);
      if (gate === undefined) return next();
      const event = String(packet[0]);
      const args = packet.slice(1);
      const decided = decideMessage(gate, parts.describeEvent?.(event, args) ?? { descriptors: { event } });
      // Events are decided at once but passed on or refused in arrival order, as ws messages are.
      gate.tail = gate.tail
        .then(() => decided)
        .then((decision) => {
          if (decision === undefined || decision.allowed) next();
          else refuseEvent(gate, socket, event, args, decision);
        })
        .catch(parts.report);
    },
  };
}

function refusedHandshake(denied: DeniedResponse): HandshakeRefusedError {
  return new HandshakeRefusedError({
    error: denied.body.error,
    status: denied.status,
    rule: denied.body.rule,
    retryAfterMs: retryMs(denied.decision.retryAfterMs),
  });
}

/** The socket's leases are held until it disconnects; it is disconnected at `maxDurationMs`. */
function holdForLife(
  socket: SocketIoSocket,
  verdict: Extract<Verdict, { action: 'allow' }>,
  maxDurationMs: number | undefined,
): void {
  const timer =
    maxDurationMs === undefined ? undefined : setTimeout(() => socket.disconnect(true), maxDurationMs);
  timer?.unref();
  socket.once('disconnect', () => {
    if (timer !== undefined) clearTimeout(timer);
    verdict.onResponse?.(101);
  });
}

/** Answers a refused event: its ack if it has one, else a `rate_limited` event; `close` disconnects. */
function refuseEvent(
  gate: MessageGate,
  socket: SocketIoSocket,
  event: string,
  args: readonly unknown[],
  decision: Decision,
): void {
  const refused = refusedEvent(event, decision);
  const ack = args.at(-1);
  if (typeof ack === 'function') ack(refused);
  else socket.emit(RATE_LIMITED_EVENT, refused);
  if (gate.refusalOf(decision.rule) === 'close') socket.disconnect(true);
}
